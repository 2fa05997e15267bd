package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabelCommand serves a copy of the shared sample, takes one answer
// over HTTP and stops with its context: the answer is in
// labels-NAME.jsonl beside the sample.
func TestLabelCommand(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"sample.jsonl", "strata.json"} {
		b, err := os.ReadFile(filepath.Join(sharedSample, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: io.Discard}
	o, err := parseLabel(env, []string{dir, "--rater", "ann"})
	if err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	o.ready = func(u string) { urls <- u }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runLabelOpts(ctx, env, o) }()
	var u string
	select {
	case u = <-urls:
	case err := <-done:
		t.Fatalf("label stopped: %v", err)
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("URL %q is not on loopback", u)
	}
	res, err := http.Post(u+"answer", "application/json", strings.NewReader(`{"id": 0, "command": true}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Errorf("answer: %s", res.Status)
	}
	// Another site's name pointed at loopback (DNS rebinding) is refused.
	req, _ := http.NewRequest(http.MethodGet, u+"state", nil)
	req.Host = "rebind.example:80"
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("a request for another host: %s, want 403", res.Status)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "labels-ann.jsonl"))
	if err != nil || !strings.Contains(string(b), `"id":0`) || !strings.Contains(string(b), `"command":true`) {
		t.Errorf("labels-ann.jsonl = %q, %v", b, err)
	}
	if !strings.Contains(out.String(), u) || !strings.Contains(out.String(), "1 of 300 items answered") {
		t.Errorf("output %q", out.String())
	}
}

// TestParseLabelUsage holds label's usage errors (exit 2).
func TestParseLabelUsage(t *testing.T) {
	for _, args := range [][]string{
		{"dir"},
		{"dir", "--rater", "a b"},
		{"--rater", "a"},
		{"dir", "--rater", "a", "--addr", "0.0.0.0:8080"},
		{"dir", "--rater", "a", "--addr", "example.com:80"},
	} {
		_, err := parseLabel(&cmdEnv{stdout: io.Discard, stderr: io.Discard}, args)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
}
