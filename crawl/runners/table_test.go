package runners

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// TestTableCoordinates: every type of the table reads a coordinate of its
// own and writes it back as the same id; a pinned type's id has no
// @VERSION, and only a type with a runner needs the sandbox.
func TestTableCoordinates(t *testing.T) {
	samples := map[string]struct {
		coord    string
		pinned   bool
		runnable bool
	}{
		RegistryNPM:   {"npm:@scope/x@1.0.0", false, true},
		RegistryPyPI:  {"pypi:x-y@1.0", false, true},
		RegistryOCI:   {"oci:ghcr.io/acme/server:1.0", true, true},
		RegistryMCPB:  {"mcpb:https://example.org/s.mcpb", true, true},
		RegistryNuGet: {"nuget:Acme.Server@1.0.0", false, false},
	}
	for typ := range runners {
		s, ok := samples[typ]
		if !ok {
			t.Errorf("the table's type %q has no sample coordinate here", typ)
			continue
		}
		p, err := ParsePackageID(s.coord)
		if err != nil {
			t.Errorf("%s: %v", s.coord, err)
			continue
		}
		if p.RegistryType != typ || p.ID() != s.coord || p.Transport != probe.TransportStdio {
			t.Errorf("%s reads as %+v, id %s", s.coord, p, p.ID())
		}
		if (p.Version == "") != s.pinned {
			t.Errorf("%s: version %q, pinned %v", s.coord, p.Version, s.pinned)
		}
		if runnable(p) != s.runnable {
			t.Errorf("%s: runnable %v, want %v", s.coord, runnable(p), s.runnable)
		}
	}
	if _, known := lookup("cargo"); known {
		t.Error("a type server.json does not name reads as known")
	}
}
