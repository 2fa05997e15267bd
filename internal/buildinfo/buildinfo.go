// Package buildinfo reads the module version and VCS revision that the Go
// toolchain records in the binary, for `atlas-reproduce version` and the
// User-Agent of network clients.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Info is what the build recorded about itself.
type Info struct {
	// Module is the main module's path.
	Module string
	// Version is the module version: a tag or pseudo-version for a binary
	// built by `go install ...@version`, "(devel)" for a build in a
	// checkout.
	Version string
	// Revision and Time are the VCS commit and its time, when the build
	// was made in a checkout with VCS stamping on; Modified says the work
	// tree had uncommitted changes.
	Revision, Time string
	Modified       bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Read returns the build's information; fields the build did not record
// are empty.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(unknown)"}
	}
	info := Info{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the one-line form `atlas-reproduce version` prints.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("atlas-reproduce ")
	b.WriteString(i.Version)
	if i.Revision != "" {
		b.WriteString(" (")
		b.WriteString(i.Revision)
		if i.Modified {
			b.WriteString(", modified")
		}
		if i.Time != "" {
			b.WriteString(", ")
			b.WriteString(i.Time)
		}
		b.WriteString(")")
	}
	if i.GoVersion != "" {
		b.WriteString(" ")
		b.WriteString(i.GoVersion)
	}
	return b.String()
}

// UserAgent names the tool and its version for HTTP requests, e.g.
// "atlas-reproduce/v0.3.0" or "atlas-reproduce/(devel)+1a2b3c4d5e6f".
func (i Info) UserAgent() string {
	ua := "atlas-reproduce/" + i.Version
	if i.Revision != "" {
		r := i.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		ua += "+" + r
	}
	return ua
}
