package runners

import (
	"context"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// Runner is what the crawl knows of one package type: what its
// coordinates name, what the machine needs to run its packages, and how
// one package is installed and run in the sandbox. A Set makes one of
// each type among its packages, from the table below. Adding a package
// type is a file with its Runner and one line of the table: nothing else
// dispatches on a registry type.
type Runner interface {
	// pinned says the identifier names the version itself (an image
	// reference, a bundle's URL): the coordinate has no @VERSION.
	pinned() bool
	// check says why p's identifier names nothing fetchable, or "" when
	// it names something; it may complete p from what a registry entry
	// gives (an image's tag given as its version).
	check(p *Package) string
	// find looks for what the type's packages need on this machine
	// before any sandbox is looked for, and says why they cannot run
	// here, or "".
	find() string
	// prepare readies the machine for the type's packages once, in s's
	// sandbox and cache: their registry's proxy, their runtime.
	prepare(ctx context.Context, s *Set) error
	// run installs pkg (or finds it in the cache) and probes its server
	// in the sandbox.
	run(ctx context.Context, s *Set, pkg *Package) probe.Result
	// proxy is the install step's proxy prepare started, or nil.
	proxy() *sandbox.Proxy
}

// runners is the table of package types, as server.json names them: each
// type's Runner, made afresh for each Set. A nil entry is a type the
// registry knows and no runner here runs (its packages are recorded as
// no_runtime).
var runners = map[string]func() Runner{
	RegistryNPM:   func() Runner { return &npmRunner{} },
	RegistryPyPI:  func() Runner { return &pypiRunner{} },
	RegistryOCI:   func() Runner { return &ociRunner{} },
	RegistryMCPB:  func() Runner { return &mcpbRunner{} },
	RegistryNuGet: nil,
}

// lookup is a new Runner of registry type t; known says the type is one
// server.json names, r is nil when no runner here runs it.
func lookup(t string) (r Runner, known bool) {
	mk, known := runners[t]
	if mk == nil {
		return nil, known
	}
	return mk(), true
}

// runnable says the package needs the sandbox: a type with a runner here,
// over stdio, and an entry that names something to fetch.
func runnable(p *Package) bool {
	return runners[p.RegistryType] != nil && p.Transport == probe.TransportStdio && p.Invalid == ""
}
