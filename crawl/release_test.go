package crawl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
)

// TestReleaseJSON checks release.json field by field against the crawl
// that wrote it, and its line in SHA256SUMS.
func TestReleaseJSON(t *testing.T) {
	fl := newFleet(t, 3)
	out := t.TempDir()
	opt := crawlOpts(fl, out, 3)
	opt.PerHost, opt.MaxMemory = 1, 256<<20
	before := time.Now().UTC().Truncate(time.Second)
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	rel, err := release.Read(out)
	if err != nil || rel == nil {
		t.Fatalf("release.json: %v %v", rel, err)
	}
	bi := buildinfo.Read()
	if rel.Tool != (release.Tool{Name: "atlas-reproduce", Version: bi.Version, Revision: bi.Revision, Modified: bi.Modified, Go: bi.GoVersion}) || rel.Tool.Version == "" {
		t.Errorf("tool %+v", rel.Tool)
	}
	started, err1 := time.Parse(time.RFC3339, rel.Started)
	finished, err2 := time.Parse(time.RFC3339, rel.Finished)
	if err1 != nil || err2 != nil || started.Location() != time.UTC || started.Before(before) || finished.Before(started) || finished.After(after) {
		t.Errorf("started %q finished %q, not UTC times within the crawl (%v %v)", rel.Started, rel.Finished, err1, err2)
	}
	wantOpt := release.Options{Concurrency: 3, PerHost: 1, Timeout: fleetProbe.Timeout.String(), MaxTools: fleetProbe.MaxTools,
		MaxBytes: fleetProbe.MaxBytes, MaxPages: fleetProbe.MaxPages, MaxMemory: 256 << 20, OmitElapsed: true}
	if rel.Options != wantOpt {
		t.Errorf("options %+v, want %+v", rel.Options, wantOpt)
	}
	if rel.Client.ProtocolVersion != probe.RequestedVersion || compactJSON(rel.Client.ClientInfo) != `{"name":"atlas-reproduce","version":"`+bi.Version+`"}` ||
		compactJSON(rel.Client.Capabilities) != `{"roots":{"listChanged":true}}` {
		t.Errorf("client %s %s %s", rel.Client.ProtocolVersion, rel.Client.ClientInfo, rel.Client.Capabilities)
	}
	cb, _ := os.ReadFile(fl.candidates)
	h := sha256.Sum256(cb)
	if rel.Candidates != (release.Source{File: fl.candidates, SHA256: hex.EncodeToString(h[:])}) {
		t.Errorf("candidates %+v", rel.Candidates)
	}
	if !slices.Equal(rel.Client.ProtocolVersions, []string{probe.StatelessVersion, probe.RequestedVersion}) {
		t.Errorf("protocol versions %q", rel.Client.ProtocolVersions)
	}
	kinds := map[string]int{}
	byProtocol := map[ProtocolKey]int{}
	sb, _ := os.ReadFile(filepath.Join(out, release.ServersFile))
	for _, l := range gunzipLines(t, sb) {
		var rec ServerRecord
		json.Unmarshal([]byte(l), &rec)
		if !rec.Reachable {
			kinds[rec.ErrorKind]++
		}
		if rec.ProtocolVersion != "" {
			byProtocol[ProtocolKey{rec.ProtocolVersion, rec.Generation}]++
		}
	}
	if got := rel.Counts.ByProtocol; len(got) != len(byProtocol) || len(got) == 0 {
		t.Errorf("by protocol %+v, want %v", got, byProtocol)
	}
	for _, pc := range rel.Counts.ByProtocol {
		if byProtocol[ProtocolKey{pc.ProtocolVersion, pc.Generation}] != pc.Servers {
			t.Errorf("%+v, want %v", pc, byProtocol)
		}
	}
	c := rel.Counts
	if c.Candidates != sum.Candidates || c.Servers != len(fl.order) || c.Reachable != fl.reachable || c.Unreachable != len(fl.order)-fl.reachable ||
		c.Tools != sum.Tools || sum.Tools == 0 || len(c.UnreachableByKind) != len(kinds) {
		t.Errorf("counts %+v, summary %+v, kinds %v", c, sum, kinds)
	}
	for k, n := range kinds {
		if c.UnreachableByKind[k] != n {
			t.Errorf("unreachable %s: %d, want %d", k, c.UnreachableByKind[k], n)
		}
	}
	m, err := hashverify.ReadSHA256Sums(filepath.Join(out, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := os.ReadFile(filepath.Join(out, release.File))
	hr := hashverify.NewReader(bytes.NewReader(rb))
	hr.Read(make([]byte, len(rb)+1))
	if err := m.Check(release.File, hr.Sum()); err != nil {
		t.Errorf("SHA256SUMS: %v", err)
	}
}

func compactJSON(b []byte) string {
	var out bytes.Buffer
	json.Compact(&out, b)
	return out.String()
}

// TestDeclaredMatchesWire: what release.json says the client declared is
// what a server receives in initialize.
func TestDeclaredMatchesWire(t *testing.T) {
	h := crawltest.MCPHandler(crawltest.NewSDKServer(crawltest.GenTools(1, "w"), 0))
	got := make(chan []byte, 1)
	ts := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
			select {
			case got <- msg.Params:
			default:
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	if r := crawltest.ProbeOnce(t, probe.Options{}, ts.URL); !r.Reachable {
		t.Fatalf("%s: %s", r.ErrorKind, r.Error)
	}
	var wire probe.InitializeSent
	if err := json.Unmarshal(<-got, &wire); err != nil {
		t.Fatal(err)
	}
	d, err := probe.Declared(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if wire.ProtocolVersion != probe.RequestedVersion || compactJSON(wire.ClientInfo) != compactJSON(d.ClientInfo) ||
		compactJSON(wire.Capabilities) != compactJSON(d.Capabilities) || len(d.Capabilities) == 0 {
		t.Errorf("on the wire %s %s %s; declared %s %s", wire.ProtocolVersion, wire.ClientInfo, wire.Capabilities, d.ClientInfo, d.Capabilities)
	}
}
