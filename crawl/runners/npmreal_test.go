package runners

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"

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
	var ids []string
	for _, p := range realPackages {
		ids = append(ids, p.id)
	}
	got := runAll(t, Options{Cache: crawltest.CacheDir(t)}, 2*time.Minute, 16<<20, ids...)
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
