package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScanConfigSuppressions accepts two findings of a configured loopback
// server: the command-string tool until a date, the credential tool for
// good. At a fixed "now" on the last day both hold: the verdict passes,
// and the JSON and the table list them as suppressed with their reasons.
// The day after, the dated one has expired: it is named as expired and the
// verdict fails on its finding again.
func TestScanConfigSuppressions(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sup", Version: "1"}, nil)
	addTool(s, "run_shell", "run a command", `{"type":"object","properties":{"command":{"type":"string","description":"shell command"}}}`)
	addTool(s, "login", "log in", `{"type":"object","properties":{"api_key":{"type":"string"}}}`)
	repo := loopbackConfig(t, s)
	supFile := filepath.Join(t.TempDir(), "suppressions.yaml")
	text := `suppressions:
  - class: command-string
    server: loop
    tool: run_shell
    reason: runs in a throwaway container
    expires: 2026-06-30
  - class: credential_value
    server: "*"
    reason: the key is scoped read-only
`
	if err := os.WriteFile(supFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	fail, err := parseFailOn("command-string,credential-value")
	if err != nil {
		t.Fatal(err)
	}
	scan := func(now time.Time, asJSON bool) (string, string, error) {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb}
		o := scanConfigOptions{Repo: repo, JSON: asJSON, FailOn: fail, Suppressions: supFile, Now: now,
			Probe: probe.Options{Timeout: 20 * time.Second}}
		err := runScanConfig(context.Background(), env, o)
		return out.String(), errb.String(), err
	}
	lastDay := time.Date(2026, 6, 30, 23, 59, 0, 0, time.UTC)
	stdout, stderr, err := scan(lastDay, true)
	if err != nil {
		t.Fatalf("both suppressions in force: %v\n%s", err, stderr)
	}
	var row struct {
		Tools []struct {
			Name       string
			Classes    []string
			Suppressed []suppressedClass
		}
	}
	if err := json.Unmarshal([]byte(stdout), &row); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range row.Tools {
		if len(tl.Classes) != 0 {
			t.Errorf("%s keeps classes %v in force", tl.Name, tl.Classes)
		}
		for _, a := range tl.Suppressed {
			got[tl.Name+" "+a.Class] = a.Reason + " @" + a.At
		}
	}
	want := map[string]string{
		"run_shell gg:command-string": "runs in a throwaway container @" + supFile + ":2",
		"login gg:credential-value":   "the key is scoped read-only @" + supFile + ":7",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("suppressed %s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	table, _, err := scan(lastDay, false)
	if err != nil || !strings.Contains(table, "suppressed ("+supFile+":2, until 2026-06-30): runs in a throwaway container") {
		t.Errorf("table (%v):\n%s", err, table)
	}

	_, stderr, err = scan(lastDay.Add(time.Minute), false)
	var v verdictError
	if !errors.As(err, &v) || !strings.Contains(err.Error(), "run_shell is gg:command-string") || strings.Contains(err.Error(), "credential") {
		t.Errorf("after the expiry: %v; want a verdict on the command-string tool alone", err)
	}
	if !strings.Contains(stderr, supFile+":2: the suppression of gg:command-string on loop expired on 2026-06-30") {
		t.Errorf("the expired suppression is not named:\n%s", stderr)
	}
}

// TestScanConfigSuppressUnpinned accepts the fixture's unpinned server
// from a JSON suppressions file: --fail-on unpinned passes.
func TestScanConfigSuppressUnpinned(t *testing.T) {
	file := filepath.Join("..", "..", "internal", "agentconfig", "testdata", "home", ".codex", "config.toml")
	sup := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(sup, []byte(`{"suppressions": [{"class": "unpinned", "server": "context7", "reason": "tracks upstream on purpose"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &bytes.Buffer{}}
	o := scanConfigOptions{Files: []string{file}, List: true, FailOn: failOn{unpinned: true}, Suppressions: sup, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := runScanConfig(context.Background(), env, o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "tracks upstream on purpose") {
		t.Errorf("the table does not list the suppressed finding:\n%s", out.String())
	}
}

func TestReadSuppressionsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, text, want string }{
		{"no reason", "suppressions:\n  - class: unpinned\n    server: x\n", ":2: no reason"},
		{"unknown key", "suppressions:\n  - class: unpinned\n    server: x\n    reason: r\n    until: 2026-01-01\n", `:5: unknown key "until"`},
		{"bad date", "suppressions:\n  - class: unpinned\n    server: x\n    reason: r\n    expires: soon\n", `:2: expires "soon"`},
		{"bad class", "suppressions:\n  - class: nope\n    server: x\n    reason: r\n", `:2: unknown class "nope"`},
		{"top level", "- class: unpinned\n", ":1: want a mapping"},
		{"json", `{"suppressions": [{"class": "unpinned", "reason": "r"}]}`, ":1: no server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readSuppressions(p)
			if err == nil || !strings.Contains(err.Error(), p+tc.want) {
				t.Errorf("error %v, want %q", err, p+tc.want)
			}
		})
	}
}
