package crawl

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestNodeSDKServers holds the probe to the SDKs' own clients on servers of
// other implementations, installed from internal/testenv/npm's lockfile:
// the same revision negotiated, the same tools, names and input schemas
// equal to what the SDK's client lists; then a crawl of them all counts
// them per protocol version and generation.
func TestNodeSDKServers(t *testing.T) {
	testenv.NodePackages(t) // skips without them, fails with CI=true
	cases := []struct {
		name, script string
		args         []string
		client       string // the SDK client that lists the tools: v1 or v2
		generation   string
		url          string
	}{
		{name: "TypeScript SDK 1.x, sessions", script: "ts1-server.mjs", client: "v1", generation: probe.GenerationSession},
		{name: "TypeScript SDK v2, 2026-07-28 only", script: "ts2-server.mjs", args: []string{"reject"}, client: "v2", generation: probe.GenerationStateless},
		{name: "TypeScript SDK v2, both generations", script: "ts2-server.mjs", args: []string{"stateless"}, client: "v2", generation: probe.GenerationStateless},
		{name: "server-everything", script: "everything.mjs", client: "v1", generation: probe.GenerationSession},
	}
	// The SDK's client declares what the crawl declares: servers may
	// list other tools to a client with roots.
	sent, err := probe.Declared(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var scripts [][]string
	for _, c := range cases {
		scripts = append(scripts, append([]string{c.script}, c.args...))
	}
	urls := testenv.NodeServers(t, scripts...)
	var cands []Candidate
	var clients []testenv.NodeClient
	for i := range cases {
		cases[i].url = urls[i]
		cands = append(cands, Candidate{URL: cases[i].url, Record: []byte(`{"url":"` + cases[i].url + `"}`)})
		clients = append(clients, testenv.NodeClient{Gen: cases[i].client, URL: cases[i].url})
	}
	listed := testenv.NodeListTools(t, sent.Capabilities, clients...)
	t.Run("probe", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				want := listed[i]
				r := crawltest.ProbeOnce(t, probe.Options{}, c.url)
				if !r.Reachable || r.Transport != probe.TransportStreamable {
					t.Fatalf("reachable=%v %s %s over %q", r.Reachable, r.ErrorKind, r.Error, r.Transport)
				}
				if r.ProtocolVersion != want.ProtocolVersion || r.Generation != c.generation {
					t.Errorf("protocol %s (%s), the SDK's client negotiated %s; want generation %s", r.ProtocolVersion, r.Generation, want.ProtocolVersion, c.generation)
				}
				if c.generation == probe.GenerationStateless && !slices.Contains(r.SupportedVersions, probe.StatelessVersion) {
					t.Errorf("supported versions %q, from server/discover, lack %s", r.SupportedVersions, probe.StatelessVersion)
				}
				if len(r.Tools) != len(want.Tools) || len(r.Tools) == 0 {
					t.Fatalf("%d tools, the SDK's client lists %d", len(r.Tools), len(want.Tools))
				}
				for i := range r.Tools {
					got, exp := crawltest.NameAndSchema(t, r.Tools[i]), crawltest.NameAndSchema(t, want.Tools[i])
					if !reflect.DeepEqual(got, exp) {
						t.Errorf("tool %d:\n got %v\nwant %v", i, got, exp)
					}
				}
			})
		}
	})
	t.Run("crawl", func(t *testing.T) {
		out := t.TempDir()
		sum, err := Run(context.Background(), Options{CandidateList: cands, Out: out, OmitElapsed: true,
			Probe: probe.Options{Timeout: 30 * time.Second, AllowAddr: crawltest.Loopback}})
		if err != nil || sum.Reachable != len(cases) {
			t.Fatalf("%+v %v", sum, err)
		}
		rel, err := release.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		want := []release.ProtocolCount{{ProtocolVersion: probe.StatelessVersion, Generation: probe.GenerationStateless, Servers: 2},
			{ProtocolVersion: probe.RequestedVersion, Generation: probe.GenerationSession, Servers: 2}}
		if !slices.Equal(rel.Counts.ByProtocol, want) {
			t.Errorf("by protocol %+v, want %+v", rel.Counts.ByProtocol, want)
		}
	})
}
