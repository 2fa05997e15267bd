package crawl

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// realPackages are real MCP servers of the npm registry at pinned
// versions, each with tools its listing must hold.
var realPackages = []struct {
	id    string
	tools []string
}{
	{"npm:@modelcontextprotocol/server-memory@2026.8.31", []string{"create_entities", "read_graph"}},
	{"npm:@modelcontextprotocol/server-sequential-thinking@2026.8.31", []string{"sequentialthinking"}},
	{"npm:@modelcontextprotocol/server-everything@2026.8.31", []string{"echo"}},
}

// needNPMRegistry ends the test by testenv.Missing when the npm registry
// npm is configured with cannot be reached.
func needNPMRegistry(t *testing.T) {
	t.Helper()
	conf, err := readNPMConfig(context.Background(), "npm")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := conf.tlsConfig()
	if err != nil {
		t.Fatal(err)
	}
	up, err := conf.upstream()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyURL(up)}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	resp, err := client.Get(strings.TrimSuffix(conf.Registry, "/") + "/-/ping")
	if err != nil {
		testenv.Missing(t, "the npm registry %s is unreachable: %v", conf.Registry, err)
		return
	}
	resp.Body.Close()
}

// TestNPMRealPackages crawls real servers of the npm registry, installed
// in the sandbox from the registry npm is configured with, and checks
// each lists the tools it is known to have.
func TestNPMRealPackages(t *testing.T) {
	npmtest.NeedSandbox(t)
	needNPMRegistry(t)
	var lines []string
	for _, p := range realPackages {
		lines = append(lines, p.id)
	}
	cands, err := ParseCandidates(strings.NewReader(strings.Join(lines, "\n")+"\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{CandidateList: cands, Out: filepath.Join(t.TempDir(), "out"), AllowPrivate: true, OmitElapsed: true,
		Probe: ProbeOptions{Timeout: 2 * time.Minute, MaxBytes: 16 << 20}, Packages: PackageOptions{Cache: cacheDir(t)}}
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	got := readServers(t, opt.Out)
	for _, p := range realPackages {
		rec, ok := got[p.id]
		switch {
		case !ok:
			t.Errorf("%s: no record", p.id)
		case !rec.Reachable:
			t.Errorf("%s: %s: %s", p.id, rec.ErrorKind, rec.Error)
		default:
			for _, name := range p.tools {
				if !slices.Contains(rec.tools, name) {
					t.Errorf("%s lists %v, without %s", p.id, rec.tools, name)
				}
			}
		}
	}
}
