package crawl

import (
	"cmp"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TypeRemote is the type of a server reached by URL in the counts by
// package type.
const TypeRemote = "remote"

// OutcomeReachable is the outcome of a reachable server in the counts by
// package type; the others are error kinds.
const OutcomeReachable = "reachable"

// PackageTypeKey is a server's type (remote, or its package's registry
// type) and outcome (reachable, or its error kind).
type PackageTypeKey struct {
	Type, Outcome string
}

func packageTypeKey(t *target, s *ServerRecord) PackageTypeKey {
	k := PackageTypeKey{Type: TypeRemote, Outcome: OutcomeReachable}
	if t.pkg != nil {
		k.Type = t.pkg.RegistryType
		if k.Type == "" {
			k.Type = "(none)"
		}
	}
	if !s.Reachable {
		k.Outcome = s.ErrorKind
	}
	return k
}

// packageTypeCounts are the counts in type order, reachable first within
// a type, then the error kinds by name.
func packageTypeCounts(m map[PackageTypeKey]int) []release.PackageTypeCount {
	out := make([]release.PackageTypeCount, 0, len(m))
	for k, n := range m {
		out = append(out, release.PackageTypeCount{Type: k.Type, Outcome: k.Outcome, Servers: n})
	}
	slices.SortFunc(out, func(a, b release.PackageTypeCount) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), -cmp.Compare(boolInt(a.Outcome == OutcomeReachable), boolInt(b.Outcome == OutcomeReachable)),
			cmp.Compare(a.Outcome, b.Outcome))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// protocolCounts lists the counts newest version first, then by
// generation.
func protocolCounts(m map[ProtocolKey]int) []release.ProtocolCount {
	out := make([]release.ProtocolCount, 0, len(m))
	for k, n := range m {
		out = append(out, release.ProtocolCount{ProtocolVersion: k.Version, Generation: k.Generation, Servers: n})
	}
	slices.SortFunc(out, func(a, b release.ProtocolCount) int {
		return cmp.Or(-cmp.Compare(a.ProtocolVersion, b.ProtocolVersion), cmp.Compare(a.Generation, b.Generation))
	})
	return out
}
