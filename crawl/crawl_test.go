package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// fleet is a set of loopback servers and the candidates list naming them.
type fleet struct {
	candidates string
	served     map[string][]crawltest.Tool // server_id -> tools, for the reachable ones
	order      []string                    // server_ids in candidate order
	reachable  int
}

// add lists a server, rawURL, as a bare line or (not bare) a JSON line,
// serving tools (nil: not reachable), and returns its candidate line.
func (fl *fleet) add(t *testing.T, rawURL string, tools []crawltest.Tool, bare bool) string {
	t.Helper()
	id, _, err := probe.Normalise(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	fl.order = append(fl.order, id)
	if tools != nil {
		fl.served[id] = tools
		fl.reachable++
	}
	if bare {
		return rawURL
	}
	b, _ := json.Marshal(map[string]string{"url": rawURL, "source": "test"})
	return string(b)
}

func writeCandidates(t *testing.T, lines []string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "candidates.jsonl")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// newFleet starts good servers of varied sizes and transports, and hostile
// ones, and lists them with both candidate layouts and a duplicate.
func newFleet(t *testing.T, good int) *fleet {
	fl := &fleet{served: map[string][]crawltest.Tool{}}
	var lines []string
	add := func(rawURL string, tools []crawltest.Tool, bare bool) {
		lines = append(lines, fl.add(t, rawURL, tools, bare))
	}
	for i := range good {
		tools := crawltest.GenTools(5+i*7, "srv"+string(rune('a'+i)))
		switch i % 3 {
		case 0:
			add(crawltest.StreamableServer(t, tools, 10, true).URL+"/mcp", tools, i%2 == 0)
		case 1:
			add(crawltest.StreamableServer(t, tools, 0, false).URL, tools, false)
		case 2:
			add(crawltest.SSEServer(t, tools).URL+"/sse", tools, true)
		}
	}
	add(crawltest.ServeHanging(t, crawltest.Hanging).URL, nil, false)
	add(crawltest.Serve(t, crawltest.Status(500)).URL, nil, true)
	add(crawltest.Serve(t, crawltest.Paginating(false)).URL, nil, false)
	lines = append(lines, lines[0]) // a duplicate: one server, one record
	lines = append(lines, `{"url": "ftp://example.org/mcp"}`)
	fl.order = append(fl.order, "ftp://example.org/mcp")
	fl.candidates = writeCandidates(t, lines)
	return fl
}

// fleetProbe bounds the fleet's servers: a deadline long enough for the good
// ones on a loaded machine under the race detector, short enough for the
// hanging one not to slow the tests much.
var fleetProbe = probe.Options{Timeout: 2 * time.Second, MaxPages: crawltest.FastProbe.MaxPages, MaxTools: crawltest.FastProbe.MaxTools, MaxBytes: crawltest.FastProbe.MaxBytes, AllowAddr: crawltest.Loopback}

func crawlOpts(fl *fleet, out string, concurrency int) Options {
	return Options{Candidates: fl.candidates, Out: out, Concurrency: concurrency, OmitElapsed: true, Probe: fleetProbe}
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range append([]string{release.SumsFile}, hashverify.SnapshotFiles()...) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	return files
}

func gunzipLines(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header carries mtime %v name %q", zr.ModTime, zr.Name)
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(all), "\n"), "\n")
}

// TestCrawlLayoutAndDeterminism: crawls of one fleet at concurrency 1, 3
// and 32 give the same bytes, in the snapshot's layout. The fleet runs in a
// testing/synctest bubble on in-memory connections, so a deadline passes
// on the bubble's clock, never because the machine is busy: the silent
// servers are recorded the same way in every crawl, under any load.
func TestCrawlLayoutAndDeterminism(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := crawltest.NewPipeNet(t)
		fl := newPipeFleet(t, n, 6, 3)
		var first map[string][]byte
		for _, conc := range []int{1, 3, 32} {
			out := t.TempDir()
			opt := Options{Candidates: fl.candidates, Out: out, Concurrency: conc, OmitElapsed: true, Probe: n.Probe(2 * time.Second)}
			sum, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Reachable != fl.reachable || sum.Servers != len(fl.order) || sum.Probed != len(fl.order)-1 {
				t.Fatalf("concurrency %d: %+v, want %d reachable of %d servers", conc, sum, fl.reachable, len(fl.order))
			}
			files := readAll(t, out)
			if first == nil {
				first = files
				checkLayout(t, fl, files)
				checkSilent(t, files, 3, "no answer within 666.666666ms (during server/discover)")
				continue
			}
			for n, b := range files {
				if n == release.SumsFile {
					// release.json names the concurrency and the times.
					b, first[n] = withoutRelease(b), withoutRelease(first[n])
				}
				if !bytes.Equal(b, first[n]) {
					t.Errorf("concurrency %d: %s differs from concurrency 1", conc, n)
				}
			}
		}
	})
}

// checkSilent holds the records of the silent servers to one fixed form.
func checkSilent(t *testing.T, files map[string][]byte, want int, msg string) {
	t.Helper()
	got := 0
	for _, l := range gunzipLines(t, files[release.ServersFile]) {
		var rec ServerRecord
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.ErrorKind != probe.KindTimeout {
			continue
		}
		got++
		if rec.FailedStep != probe.MethodDiscover || rec.Error != msg || rec.Transport != "" {
			t.Errorf("a silent server is recorded as %s, want failed_step %q, error %q", l, probe.MethodDiscover, msg)
		}
	}
	if got != want {
		t.Errorf("%d timeout records, want %d", got, want)
	}
}

func withoutRelease(sums []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(sums, []byte("\n")) {
		if !bytes.HasSuffix(bytes.TrimSpace(l), []byte("  "+release.File)) {
			out = append(out, l...)
		}
	}
	return out
}

// checkLayout holds the files to the snapshot's layout and to what the
// servers served.
func checkLayout(t *testing.T, fl *fleet, files map[string][]byte) {
	t.Helper()
	servers := gunzipLines(t, files[release.ServersFile])
	if len(servers) != len(fl.order) {
		t.Fatalf("%d server records, want %d", len(servers), len(fl.order))
	}
	toolLines := gunzipLines(t, files[release.ToolsFile])
	ti := 0
	for i, l := range servers {
		var rec ServerRecord
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.ServerID != fl.order[i] {
			t.Fatalf("record %d is %s, want %s (candidate order)", i, rec.ServerID, fl.order[i])
		}
		if rec.ElapsedMS != nil {
			t.Errorf("%s: elapsed_ms with OmitElapsed", rec.ServerID)
		}
		tools, ok := fl.served[rec.ServerID]
		if rec.Reachable != ok || (!ok && (rec.ErrorKind == "" || rec.Error == "")) || (ok && rec.Transport == "") {
			t.Fatalf("record %s", l)
		}
		if !ok {
			continue
		}
		if rec.ToolCount != len(tools) {
			t.Errorf("%s: tool_count %d, want %d", rec.ServerID, rec.ToolCount, len(tools))
		}
		var st struct {
			ServerID string            `json:"server_id"`
			Tools    []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal([]byte(toolLines[ti]), &st); err != nil {
			t.Fatal(err)
		}
		ti++
		if st.ServerID != rec.ServerID || len(st.Tools) != len(tools) {
			t.Fatalf("server_tools line %d: %s with %d tools, want %s with %d", ti, st.ServerID, len(st.Tools), rec.ServerID, len(tools))
		}
		for k := range tools {
			if want := tools[k].Served(t); !bytes.Equal(st.Tools[k], want) {
				t.Fatalf("%s tool %d: %s, want %s", rec.ServerID, k, st.Tools[k], want)
			}
		}
	}
	if ti != len(toolLines) || ti != fl.reachable {
		t.Errorf("%d server_tools lines, want %d", len(toolLines), fl.reachable)
	}
	m, err := hashverify.ParseSHA256Sums(bytes.NewReader(files[release.SumsFile]), release.SumsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range hashverify.SnapshotFiles() {
		h := hashverify.NewReader(bytes.NewReader(files[n]))
		io.Copy(io.Discard, h)
		if err := m.Check(n, h.Sum()); err != nil {
			t.Error(err)
		}
	}
}

// TestRunOnCrawl: run reads the crawl's output, verified by its manifest,
// and counts exactly the tools served, classified as the labeller
// classifies the served definitions.
func TestRunOnCrawl(t *testing.T) {
	fl := newFleet(t, 4)
	out := t.TempDir()
	if _, err := Run(context.Background(), Options{Candidates: fl.candidates, Out: out, Probe: fleetProbe}); err != nil {
		t.Fatal(err)
	}
	checkRunCounts(t, out, fl.served, fl.reachable)
}

// checkRunCounts runs run on the release in out and holds its counts to
// the tools served.
func checkRunCounts(t *testing.T, out string, served map[string][]crawltest.Tool, reachable int) {
	t.Helper()
	m, err := hashverify.ReadSHA256Sums(filepath.Join(out, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	repDir := t.TempDir()
	rep, err := pipeline.Run(context.Background(), pipeline.Options{Data: out, Out: repDir, Manifest: m, ManifestName: release.SumsFile})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// The report shows the release's provenance, in every form.
		if rep.Release == nil || rep.Release.Counts.Tools != int(rep.Tools) || rep.Release.Counts.Reachable != reachable {
			t.Errorf("report.json release block %+v", rep.Release)
		}
		md, _ := os.ReadFile(filepath.Join(repDir, "report.md"))
		html, _ := os.ReadFile(filepath.Join(repDir, "report.html"))
		if !bytes.Contains(md, []byte("## Crawl release")) || !bytes.Contains(html, []byte(`<table id="release">`)) {
			t.Errorf("report.md or report.html lacks the crawl release section")
		}
		// A crawl is a release, not a failed reproduction.
		if rep.Kind != report.KindRelease || rep.Verdict != "" || !bytes.HasPrefix(md, []byte("# Census release report")) || bytes.Contains(md, []byte("REPRODUCED")) {
			t.Errorf("a crawl's report: kind %q verdict %q, report.md %.80q", rep.Kind, rep.Verdict, md)
		}
	}()
	wantTools := 0
	wantClass := map[string]report.Row{}
	l := label.NewLabeller()
	for _, tools := range served {
		for _, tool := range tools {
			wantTools++
			err := l.Record(tool.Served(t), func(tl *label.ToolLabels) error {
				for _, c := range tl.Classes {
					r := wantClass[c]
					r.Tools++
					wantClass[c] = r
				}
				for _, c := range tl.RequiredClasses {
					r := wantClass[c]
					r.Required++
					wantClass[c] = r
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if !rep.Verified || rep.Tools != int64(wantTools) || rep.Servers != int64(reachable) {
		t.Fatalf("run: verified %v, %d tools on %d servers; want %d on %d", rep.Verified, rep.Tools, rep.Servers, wantTools, reachable)
	}
	nonzero := 0
	for id, c := range rep.Classes {
		w := wantClass[id]
		if c.Tools != w.Tools || c.Required != w.Required {
			t.Errorf("%s: %d tools (%d required), want %d (%d)", id, c.Tools, c.Required, w.Tools, w.Required)
		}
		if c.Tools > 0 {
			nonzero++
		}
	}
	if nonzero < 3 {
		t.Errorf("only %d classes seen: the served tools do not exercise the classifier", nonzero)
	}
}

// TestRegistryCrawlThenRun: a registry of loopback servers, crawled, then
// run on the release, counts exactly the tools of the servers the registry
// lists as active, latest versions; the deleted server is never asked.
func TestRegistryCrawlThenRun(t *testing.T) {
	served := map[string][]crawltest.Tool{}
	var entries []map[string]any
	for i := range 4 {
		tools := crawltest.GenTools(4+i*5, "reg"+string(rune('a'+i)))
		var u string
		if i%2 == 0 {
			u = crawltest.StreamableServer(t, tools, 3, true).URL + "/mcp"
		} else {
			u = crawltest.SSEServer(t, tools).URL + "/sse"
		}
		id, _, _ := probe.Normalise(u)
		served[id] = tools
		typ := probe.TransportStreamable
		if i%2 == 1 {
			typ = "old:" + probe.TransportSSE
		}
		entries = append(entries, regEntry(fmt.Sprintf("io.test/s%d", i), "1.0.0", "active", true, "2025-01-01T00:00:00Z", remote(typ, u)))
	}
	var asked atomic.Int32
	deleted := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { asked.Add(1); w.WriteHeader(500) }))
	entries = append(entries, regEntry("io.test/deleted", "1.0.0", "deleted", true, "2025-01-01T00:00:00Z", remote(probe.TransportStreamable, deleted.URL)))
	reg := crawltest.Serve(t, &standInRegistry{entries: entries, pageSize: 2})
	cands, _, err := FetchRegistry(context.Background(), RegistryOptions{URL: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// No server here hangs: a long deadline keeps a loaded machine from
	// turning a slow answer into a timeout.
	probe := fleetProbe
	probe.Timeout = 30 * time.Second
	sum, err := Run(context.Background(), Options{CandidateList: cands, Source: release.Source{Registry: reg.URL}, Out: out, Probe: probe})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reachable != 4 || sum.Unreachable != 0 || asked.Load() != 0 {
		t.Fatalf("%+v; the deleted server was asked %d times", sum, asked.Load())
	}
	rel, err := release.Read(out)
	if err != nil || rel.Candidates != (release.Source{Registry: reg.URL}) {
		t.Errorf("release candidates %+v (%v)", rel, err)
	}
	kept, _ := os.ReadFile(filepath.Join(out, release.CandidatesFile))
	var want bytes.Buffer
	for _, c := range cands {
		want.Write(c.Record)
		want.WriteByte('\n')
	}
	if !bytes.Equal(kept, want.Bytes()) {
		t.Errorf("candidates_remotes.jsonl:\n%s\nwant\n%s", kept, want.Bytes())
	}
	checkRunCounts(t, out, served, 4)
}

// TestCrawlResume interrupts a crawl mid-way, reruns it, and checks that no
// finished candidate is probed again and that the output equals an
// uninterrupted crawl's.
func TestCrawlResume(t *testing.T) {
	var mu sync.Mutex
	inits := map[string]int{}
	block := make(chan struct{})
	blocking := ""
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var lines []string
	for i := range 6 {
		tools := crawltest.GenTools(3+i, "r"+string(rune('a'+i)))
		s := crawltest.NewSDKServer(tools, 0)
		h := crawltest.MCPHandler(s)
		var url string
		ts := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"initialize"`)) {
				mu.Lock()
				inits[url]++
				hold := url == blocking
				mu.Unlock()
				if hold {
					cancel(errors.New("interrupted"))
					select {
					case <-block:
					case <-r.Context().Done():
						return
					}
				}
			}
			h.ServeHTTP(w, r)
		}))
		url = ts.URL + "/"
		lines = append(lines, ts.URL)
		if i == 3 {
			blocking = url
		}
	}
	cands := writeCandidates(t, lines)
	out := t.TempDir()
	opt := Options{Candidates: cands, Out: out, Concurrency: 1, OmitElapsed: true, Probe: probe.Options{Timeout: 20 * time.Second, AllowAddr: crawltest.Loopback}}
	if _, err := Run(ctx, opt); err == nil || err.Error() != "interrupted" {
		t.Fatalf("interrupted crawl: %v", err)
	}
	for _, n := range append([]string{release.SumsFile}, hashverify.SnapshotFiles()...) {
		if _, err := os.Stat(filepath.Join(out, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after an interrupted crawl (%v)", n, err)
		}
	}
	// A crash mid-append leaves a torn line; the rerun must shrug it off.
	jf, err := os.OpenFile(filepath.Join(out, JournalFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	jf.WriteString(`{"server":{"server_id":"http://127.0.0.1:1/","url`)
	jf.Close()

	mu.Lock()
	blocking = ""
	before := map[string]int{}
	for k, v := range inits {
		before[k] = v
	}
	mu.Unlock()
	close(block)
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 3 || sum.Probed != 3 || sum.Reachable != 6 {
		t.Fatalf("rerun: %+v, want 3 resumed, 3 probed, 6 reachable", sum)
	}
	mu.Lock()
	for i, l := range lines {
		u := l + "/"
		want := 1
		if i == 3 {
			want = 2 // interrupted mid-probe, probed again
		}
		if before[u] > 1 || inits[u] != want {
			t.Errorf("server %d initialized %d times (%d before the rerun), want %d", i, inits[u], before[u], want)
		}
	}
	mu.Unlock()

	fresh := t.TempDir()
	opt.Out = fresh
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	a, b := readAll(t, out), readAll(t, fresh)
	// release.json records when each crawl ran, so its line in SHA256SUMS
	// differs whenever the two crawls straddle a second.
	a[release.SumsFile], b[release.SumsFile] = withoutRelease(a[release.SumsFile]), withoutRelease(b[release.SumsFile])
	for n := range a {
		if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s: resumed crawl differs from an uninterrupted one", n)
		}
	}
}

// TestCrawlStripsUserinfo: a credential in a candidate URL appears in no
// file of the release, in the journal, nor in the log.
func TestCrawlStripsUserinfo(t *testing.T) {
	good := crawltest.StreamableServer(t, crawltest.GenTools(2, "cred"), 0, true).URL
	closed := crawltest.ClosedURL(t)
	cands := writeCandidates(t, []string{
		`{"url": "` + strings.Replace(good, "http://", "http://user:s3cret@", 1) + `/mcp", "source": "x"}`,
		strings.Replace(closed, "http://", "http://user:s3cret@", 1),
		"http://u:s3cret@%zz/",
		`{"url": "ftp://u:s3cret@example.org/"}`,
	})
	out := t.TempDir()
	var log bytes.Buffer
	probe := fleetProbe
	probe.Timeout = 30 * time.Second // no server here hangs
	sum, err := Run(context.Background(), Options{Candidates: cands, Out: out, Probe: probe, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reachable != 1 || sum.Unreachable != 3 {
		t.Errorf("%+v", sum)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		if strings.HasSuffix(e.Name(), ".gz") {
			b = []byte(strings.Join(gunzipLines(t, b), "\n"))
		}
		if bytes.Contains(b, []byte("s3cret")) || bytes.Contains(b, []byte("user:")) {
			t.Errorf("%s keeps the credential:\n%s", e.Name(), b)
		}
	}
	if strings.Contains(log.String(), "s3cret") {
		t.Errorf("the log keeps the credential: %s", log.String())
	}
}

// TestCrawlOneWriter: a second crawl on a folder being written stops at
// once, naming the first, and leaves its journal alone.
func TestCrawlOneWriter(t *testing.T) {
	fl := newFleet(t, 1)
	out := t.TempDir()
	first, err := outset.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(out, JournalFile)
	os.WriteFile(journal, []byte(`{"server":{"server_id":"http://a/","url":"http://a/","reachable":false,"tool_count":0}}`+"\n"), 0o644)
	_, err = Run(context.Background(), crawlOpts(fl, out, 2))
	var le *outset.LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second writer: %v, want a LockedError naming pid %d", err, os.Getpid())
	}
	if b, _ := os.ReadFile(journal); !bytes.HasSuffix(b, []byte("}}\n")) || bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("the journal was touched: %q", b)
	}
	first.Close()
	if _, err := Run(context.Background(), crawlOpts(fl, out, 2)); err != nil {
		t.Fatalf("after the first writer closed: %v", err)
	}
}

// TestCrawlResumeOtherOptions: a journal begun with other options is not
// resumed (release.json could not say under which its probes were made);
// --fresh starts over; a rerun on a finished release keeps the start of
// the crawl its probes belong to and its options.
func TestCrawlResumeOtherOptions(t *testing.T) {
	var lines []string
	for i := range 2 {
		ts := crawltest.Serve(t, crawltest.MCPHandler(crawltest.NewSDKServer(crawltest.GenTools(2, "o"+string(rune('a'+i))), 0)))
		lines = append(lines, ts.URL)
	}
	cands := writeCandidates(t, lines)
	out := t.TempDir()
	opt := Options{Candidates: cands, Out: out, Concurrency: 1, Probe: probe.Options{Timeout: 20 * time.Second, AllowAddr: crawltest.Loopback}}
	readRelease := func() release.Release {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, release.File))
		if err != nil {
			t.Fatal(err)
		}
		var r release.Release
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	first := readRelease()

	other := opt
	other.Probe.Timeout = 10 * time.Second
	_, err := Run(context.Background(), other)
	if err == nil || !strings.Contains(err.Error(), "--fresh") || !strings.Contains(err.Error(), "--timeout 20s then, 10s now") {
		t.Fatalf("resume with another --timeout: %v, want a refusal naming the old options and --fresh", err)
	}
	if r := readRelease(); r.Options.Timeout != "20s" || r.Started != first.Started {
		t.Errorf("the refused rerun touched release.json: %+v", r)
	}

	// Same options on a finished release: the release keeps the start of
	// the crawl that probed its servers (moved back in the journal, so
	// that a start taken from the rerun could not pass for it).
	jname := filepath.Join(out, JournalFile)
	jb, err := os.ReadFile(jname)
	if err != nil {
		t.Fatal(err)
	}
	const past = "2020-01-02T03:04:05Z"
	if !bytes.Contains(jb, []byte(first.Started)) {
		t.Fatalf("the journal does not hold the crawl's start %s", first.Started)
	}
	if err := os.WriteFile(jname, bytes.Replace(jb, []byte(first.Started), []byte(past), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), opt)
	if err != nil || sum.Probed != 0 || sum.Resumed != 2 {
		t.Fatalf("rerun on a finished release: %+v, %v", sum, err)
	}
	if r := readRelease(); r.Started != past || r.Options.Timeout != "20s" {
		t.Errorf("rerun on a finished release: started %s, timeout %s; want the crawl's %s, 20s", r.Started, r.Options.Timeout, past)
	}

	other.Fresh = true
	sum, err = Run(context.Background(), other)
	if err != nil || sum.Probed != 2 || sum.Resumed != 0 {
		t.Fatalf("--fresh: %+v, %v", sum, err)
	}
	if r := readRelease(); r.Options.Timeout != "10s" || r.Started == past {
		t.Errorf("--fresh: release %+v, want timeout 10s and a new start", r)
	}
}

// TestCrawlAllBlocked: a crawl whose every candidate the address policy
// refuses says so, naming --allow-private, beside its (empty) release; one
// with a server reached does not.
func TestCrawlAllBlocked(t *testing.T) {
	ts := crawltest.Serve(t, crawltest.MCPHandler(crawltest.NewSDKServer(crawltest.GenTools(1, "b"), 0)))
	cands := writeCandidates(t, []string{ts.URL, ts.URL + "/other"})
	for _, tc := range []struct {
		name  string
		allow func(netip.Addr) bool
		want  bool
	}{{"refused", nil, true}, {"allowed", crawltest.Loopback, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			_, err := Run(context.Background(), Options{Candidates: cands, Out: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&log, nil)), Probe: probe.Options{Timeout: 20 * time.Second, AllowAddr: tc.allow}})
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(log.String(), "all 2 servers were refused by the address policy") && strings.Contains(log.String(), "--allow-private")
			if said != tc.want {
				t.Errorf("log:\n%s\nwant the refusal said: %v", log.String(), tc.want)
			}
			// The summary counts the unreachable servers by error kind.
			if counted := strings.Contains(log.String(), "unreachable=2 unreachable_by_kind.blocked=2 "); counted != tc.want {
				t.Errorf("log:\n%s\nwant the summary to count 2 blocked: %v", log.String(), tc.want)
			}
		})
	}
}

// newPipeFleet is newFleet on a pipeNet: good servers of varied sizes and
// transports, hangs silent ones, and hostile ones, listed with both
// candidate layouts and a duplicate.
func newPipeFleet(t *testing.T, n *crawltest.PipeNet, good, hangs int) *fleet {
	fl := &fleet{served: map[string][]crawltest.Tool{}}
	var lines []string
	add := func(rawURL string, tools []crawltest.Tool, bare bool) {
		lines = append(lines, fl.add(t, rawURL, tools, bare))
	}
	for i := range good {
		tools := crawltest.GenTools(5+i%11*7, fmt.Sprintf("srv%d", i))
		switch i % 3 {
		case 0:
			add(n.Streamable(tools, 10, true)+"/mcp", tools, i%2 == 0)
		case 1:
			add(n.Streamable(tools, 0, false), tools, false)
		case 2:
			add(n.SSE(tools)+"/sse", tools, true)
		}
		if i < hangs {
			add(n.Hanging(), nil, i%2 == 1)
		}
	}
	for range hangs - good {
		add(n.Hanging(), nil, false)
	}
	add(n.Serve(crawltest.Status(500)), nil, true)
	add(n.Serve(crawltest.Paginating(false)), nil, false)
	lines = append(lines, lines[0]) // a duplicate: one server, one record
	lines = append(lines, `{"url": "ftp://example.org/mcp"}`)
	fl.order = append(fl.order, "ftp://example.org/mcp")
	fl.candidates = writeCandidates(t, lines)
	return fl
}
