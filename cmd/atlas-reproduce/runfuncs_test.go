package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/serve"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// TestRunFunctions calls the commands' run functions with options structs,
// no flags parsed: each step's output is what the command line gives.
func TestRunFunctions(t *testing.T) {
	dir := t.TempDir()
	census, next, run := filepath.Join(dir, "census"), filepath.Join(dir, "next"), filepath.Join(dir, "run")
	tests := []struct {
		name      string
		run       func(ctx context.Context, env *cmdEnv) error
		wantOut   []string // in stdout
		wantErr   []string // in stderr
		wantFiles []string
	}{
		{"version", func(ctx context.Context, env *cmdEnv) error {
			return version(ctx, env, versionOptions{})
		}, []string{fmt.Sprintln(buildinfo.Read())}, nil, nil},
		{"synth", func(ctx context.Context, env *cmdEnv) error {
			return synthesise(ctx, env, synthOptions{out: census, opt: synth.Options{Tools: 60, Servers: 6, Seed: 7, Shape: synth.ShapeServers}})
		}, nil, []string{"synth: 60 tools on 6 servers (shape servers, seed 7)"}, []string{filepath.Join(census, synth.TruthFile)}},
		{"synth next", func(ctx context.Context, env *cmdEnv) error {
			return synthesise(ctx, env, synthOptions{out: next, nextOf: census, edits: 3, opt: synth.Options{Seed: 7}})
		}, nil, []string{"synth: next release of " + census}, []string{filepath.Join(next, synth.EditsFile)}},
		{"diff", func(ctx context.Context, env *cmdEnv) error {
			// A run of the census, by the package, compared with itself.
			if _, err := pipeline.Run(ctx, pipeline.Options{Data: census, Out: run, NoVerify: true}); err != nil {
				return err
			}
			return diff(ctx, env, diffOptions{old: run, new: run, json: true, failOn: []string{"gg:command-string"}})
		}, []string{`"unchanged": 60`, `"gg:command-string": 0`}, nil, nil},
		{"classify", func(ctx context.Context, env *cmdEnv) error {
			env.stdin = strings.NewReader(`{"name": "run", "inputSchema": {"properties": {"command": {"type": "string"}}, "required": ["command"]}}` + "\n")
			return classifyRun(ctx, env, classifyOptions{format: "json"})
		}, []string{`"tool": "run", "classes": ["gg:command-string"], "required_classes": ["gg:command-string"]`}, nil, nil},
		{"classify sarif", func(ctx context.Context, env *cmdEnv) error {
			env.stdin = strings.NewReader(`{"name": "run", "inputSchema": {"properties": {"command": {"type": "string"}}}}` + "\n")
			return classifyRun(ctx, env, classifyOptions{format: "sarif"})
		}, []string{`"version": "2.1.0"`, `gg:command-string`}, nil, nil},
		{"serve over stdio", func(ctx context.Context, env *cmdEnv) error {
			env.stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
			return serveRun(ctx, env, serveOptions{stdio: true})
		}, []string{`"id":1`, `"serverInfo"`}, nil, nil},
		{"inspect", func(ctx context.Context, env *cmdEnv) error {
			return inspect(ctx, env, inspectOptions{data: census, records: 10, top: 5})
		}, []string{"server_tools.jsonl.gz"}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			env := &cmdEnv{stdout: &out, stderr: &errOut}
			if err := tc.run(context.Background(), env); err != nil {
				t.Fatalf("%v; stderr %s", err, errOut.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout %q lacks %q", out.String(), w)
				}
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr %q lacks %q", errOut.String(), w)
				}
			}
			for _, f := range tc.wantFiles {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("no %s: %v", f, err)
				}
			}
		})
	}
}

// TestParseOptions: the command lines parse into the options the run
// functions take, and bad ones are usage errors naming the flag.
func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		parse   func(env *cmdEnv) (any, error)
		want    any
		wantErr string
	}{
		{"version", func(env *cmdEnv) (any, error) { return parseVersion(env, nil) }, versionOptions{}, ""},
		{"version argument", func(env *cmdEnv) (any, error) { return parseVersion(env, []string{"x"}) }, versionOptions{}, "no arguments"},
		{"inspect", func(env *cmdEnv) (any, error) { return parseInspect(env, []string{"--data", "d", "--top", "3"}) },
			inspectOptions{data: "d", records: 1000, top: 3}, ""},
		{"inspect without data", func(env *cmdEnv) (any, error) { return parseInspect(env, nil) }, inspectOptions{}, "--data"},
		{"synth scales servers with tools", func(env *cmdEnv) (any, error) {
			o, err := parseSynth(env, []string{"--out", "d", "--tools", "229539"})
			return o.opt.Servers, err
		}, synth.DefaultServers, ""},
		{"synth next", func(env *cmdEnv) (any, error) {
			o, err := parseSynth(env, []string{"--out", "d", "--next-of", "c", "--edits", "4", "--seed", "9"})
			return o, err
		}, synthOptions{out: "d", nextOf: "c", edits: 4, progress: true, opt: synth.Options{Seed: 9}}, ""},
		{"synth near-miss", func(env *cmdEnv) (any, error) {
			o, err := parseSynth(env, []string{"--out", "d", "--near-miss", "--servers", "13502"})
			return o.opt, err
		}, synth.Options{Tools: synth.DefaultTools, Servers: 13502, Seed: synth.DefaultSeed, Shape: synth.ShapeServers, NearMiss: true}, ""},
		{"synth next near-miss", func(env *cmdEnv) (any, error) {
			return parseSynth(env, []string{"--out", "d", "--next-of", "c", "--near-miss"})
		}, nil, "--near-miss does not apply"},
		{"synth next with tools", func(env *cmdEnv) (any, error) {
			return parseSynth(env, []string{"--out", "d", "--next-of", "c", "--tools", "5"})
		}, nil, "--tools does not apply"},
		{"serve", func(env *cmdEnv) (any, error) {
			return parseServe(env, []string{"--listen", "127.0.0.1:0", "--max-body", "100", "--memory-limit", "0", "--stdio"})
		}, serveOptions{cfg: serve.Config{Addr: "127.0.0.1:0", MaxBody: 100, MaxTools: serve.DefaultMaxTools, MaxConns: serve.DefaultMaxConns}, stdio: true, memLimitGiven: true}, ""},
		{"serve in flight below body", func(env *cmdEnv) (any, error) {
			return parseServe(env, []string{"--max-body", "100", "--max-in-flight", "50"})
		}, nil, "--max-in-flight 50 is below"},
		{"diff", func(env *cmdEnv) (any, error) {
			return parseDiff(env, []string{"--json", "--fail-on", "gg:command-string", "a", "b"})
		}, diffOptions{old: "a", new: "b", json: true, failOn: []string{"gg:command-string"}}, ""},
		{"diff both stdin", func(env *cmdEnv) (any, error) { return parseDiff(env, []string{"-", "-"}) }, nil, "only one of OLD and NEW"},
		{"classify", func(env *cmdEnv) (any, error) { return parseClassify(env, []string{"--schema", "-", "--sensitivity"}) },
			classifyOptions{schema: "-", format: "json", sensitivity: true}, ""},
		{"classify sensitivity with sarif", func(env *cmdEnv) (any, error) {
			return parseClassify(env, []string{"--format", "sarif", "--sensitivity"})
		}, nil, "--sensitivity needs --format json"},
		{"synth bad shape", func(env *cmdEnv) (any, error) { return parseSynth(env, []string{"--out", "d", "--shape", "x"}) }, nil, "--shape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errOut strings.Builder
			got, err := tc.parse(&cmdEnv{stdout: &errOut, stderr: &errOut})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parsed %+v, want %+v", got, tc.want)
			}
		})
	}
}
