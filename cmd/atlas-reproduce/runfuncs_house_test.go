package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/bench"
	"github.com/atlas-reproduce/atlas-reproduce/crawl"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// TestRunFunctionsNoFlags calls the run functions of candidates, crawl,
// history and sandbox with options structs, no flags parsed.
func TestRunFunctionsNoFlags(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	env := func() (*cmdEnv, *strings.Builder, *strings.Builder) {
		var out, errOut strings.Builder
		return &cmdEnv{stdout: &out, stderr: &errOut}, &out, &errOut
	}

	// A registry on loopback listing one remote on a port nothing
	// listens on: the crawl records it unreachable.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/mcp"
	dead.Close()
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"servers": [{"server": {"name": "io.example/one", "version": "1.0.0", "remotes": [{"type": "streamable-http", "url": "` + deadURL + `"}]}, "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}}], "metadata": {}}`))
	}))
	defer reg.Close()
	regOpt := crawl.RegistryOptions{URL: reg.URL, Timeout: 10 * time.Second, MaxPages: 5}

	t.Run("candidates", func(t *testing.T) {
		e, _, errOut := env()
		file := filepath.Join(dir, "candidates.jsonl")
		if err := candidatesRun(ctx, e, candidatesOptions{out: file, registry: regOpt}); err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		b, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(b), deadURL) {
			t.Fatalf("candidates file %q (%v) lacks %s", b, err, deadURL)
		}
		if !strings.Contains(errOut.String(), "1 candidates") {
			t.Errorf("stderr %q does not count the candidate", errOut)
		}
	})

	t.Run("crawl", func(t *testing.T) {
		e, _, errOut := env()
		out := filepath.Join(dir, "release")
		o := crawlOptions{registry: &regOpt, opt: crawl.Options{Out: out, Concurrency: 2, PerHost: 1, AllowPrivate: true, NoPackages: true,
			MaxMemory: 64 << 20, Probe: probe.Options{Timeout: 5 * time.Second, MaxTools: 10, MaxBytes: 1 << 20, MaxPages: 2}}}
		if err := crawlRun(ctx, e, o); err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		for _, f := range []string{"release.json", "servers.jsonl.gz", "SHA256SUMS"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("crawl wrote no %s: %v", f, err)
			}
		}
		rel, _ := os.ReadFile(filepath.Join(out, "release.json"))
		if !strings.Contains(string(rel), reg.URL) {
			t.Errorf("release.json does not name the registry %s:\n%s", reg.URL, rel)
		}
	})

	t.Run("history", func(t *testing.T) {
		census := filepath.Join(dir, "census")
		if _, err := synth.Write(ctx, census, synth.Options{Tools: 40, Servers: 4, Seed: 3, Shape: synth.ShapeServers}); err != nil {
			t.Fatalf("synth: %v", err)
		}
		var runs []string
		for _, id := range []string{"a", "b"} {
			run := filepath.Join(dir, "run-"+id)
			if _, err := pipeline.Run(ctx, pipeline.Options{Data: census, Out: run, NoVerify: true, ReleaseID: id, ReleaseDate: "2026-12-0" + map[string]string{"a": "1", "b": "2"}[id]}); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, run)
		}
		e, _, errOut := env()
		ds := filepath.Join(dir, "dataset")
		if err := historyRun(ctx, e, historyOptions{out: ds, runs: runs}); err != nil {
			t.Fatalf("%v; stderr %s", err, errOut)
		}
		if !strings.Contains(errOut.String(), "2 releases; added a, b") {
			t.Errorf("stderr %q", errOut)
		}
		if _, err := os.Stat(filepath.Join(ds, "history.html")); err != nil {
			t.Error(err)
		}
	})

	t.Run("sandbox", func(t *testing.T) {
		e, out, _ := env()
		err := sandboxCheck(ctx, e, sandboxOptions{})
		var v verdictError
		switch {
		case err == nil:
			if !strings.HasPrefix(out.String(), "sandbox: works") {
				t.Errorf("no error, stdout %q", out)
			}
		case errors.As(err, &v):
			if !strings.Contains(out.String(), "missing: ") {
				t.Errorf("%v, stdout %q names nothing missing", err, out)
			}
		default:
			t.Errorf("err = %v, want nil or a verdict", err)
		}
	})
}

// TestParseHouseOptions: bench, candidates, crawl, history and sandbox
// command lines parse into the options their run functions take.
func TestParseHouseOptions(t *testing.T) {
	tests := []struct {
		name    string
		parse   func(env *cmdEnv) (any, error)
		want    any
		wantErr string
	}{
		{"bench", func(env *cmdEnv) (any, error) {
			return parseBench(env, []string{"--data", "d", "--runs", "5", "--python-scales", ""})
		}, benchOptions{opt: bench.Options{Data: []string{"d"}, Tools: 229539, Scales: []int{1, 4, 10}, MaxServerTools: 39000, Runs: 5}}, ""},
		{"bench bad scales", func(env *cmdEnv) (any, error) { return parseBench(env, []string{"--scales", "1,x"}) }, nil, "--scales"},
		{"candidates", func(env *cmdEnv) (any, error) {
			o, err := parseCandidates(env, []string{"--registry", "http://127.0.0.1:1", "--out", "c.jsonl", "--allow-private"})
			return [3]any{o.out, o.registry.URL, o.registry.AllowPrivate}, err
		}, [3]any{"c.jsonl", "http://127.0.0.1:1", true}, ""},
		{"candidates bad time", func(env *cmdEnv) (any, error) {
			return parseCandidates(env, []string{"--registry", "u", "--out", "c", "--updated-since", "yesterday"})
		}, nil, "--updated-since"},
		{"crawl candidates", func(env *cmdEnv) (any, error) {
			o, err := parseCrawl(env, []string{"--candidates", "c", "--out", "o", "--shard", "1/4", "--allow-private"})
			return [5]any{o.opt.Candidates, o.opt.Out, o.opt.Shard, o.opt.AllowPrivate, o.registry == nil}, err
		}, [5]any{"c", "o", crawl.Shard{Index: 1, Count: 4}, true, true}, ""},
		{"crawl registry", func(env *cmdEnv) (any, error) {
			o, err := parseCrawl(env, []string{"--registry", "http://r", "--out", "o", "--allow-private"})
			if o.registry == nil {
				return nil, err
			}
			return [2]any{o.registry.URL, o.registry.AllowPrivate}, err
		}, [2]any{"http://r", true}, ""},
		{"crawl both sources", func(env *cmdEnv) (any, error) {
			return parseCrawl(env, []string{"--registry", "http://r", "--candidates", "c", "--out", "o"})
		}, nil, "one of --candidates FILE and --registry URL"},
		{"crawl memory below bytes", func(env *cmdEnv) (any, error) {
			return parseCrawl(env, []string{"--candidates", "c", "--out", "o", "--max-memory", "10", "--max-bytes", "20"})
		}, nil, "--max-memory must be more"},
		{"history", func(env *cmdEnv) (any, error) {
			return parseHistory(env, []string{"--out", "d", "--replace", "r1", "r2"})
		},
			historyOptions{out: "d", runs: []string{"r1", "r2"}, replace: true}, ""},
		{"history without runs", func(env *cmdEnv) (any, error) { return parseHistory(env, []string{"--out", "d"}) }, nil, "at least one run"},
		{"sandbox", func(env *cmdEnv) (any, error) { return parseSandbox(env, []string{"check"}) }, sandboxOptions{}, ""},
		{"sandbox other", func(env *cmdEnv) (any, error) { return parseSandbox(env, []string{"run"}) }, nil, "one argument: check"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errOut strings.Builder
			got, err := tc.parse(&cmdEnv{stdout: &errOut, stderr: &errOut})
			if tc.wantErr != "" {
				var u usageError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &u) {
					t.Errorf("err = %v, want a usage error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestCountTools: one tool is "1 tool", as "1 tools changed" was not.
func TestCountTools(t *testing.T) {
	for n, want := range map[int]string{0: "0 tools", 1: "1 tool", 2: "2 tools", 1000: "1000 tools"} {
		if got := countTools(n); got != want {
			t.Errorf("countTools(%d) = %q, want %q", n, got, want)
		}
	}
}
