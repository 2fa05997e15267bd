package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestParseScan(t *testing.T) {
	tests := []struct {
		args  []string
		usage string // a usage error saying this, or "" for none
		check func(scanOptions) bool
	}{
		{[]string{"--repo", "d", "--format", "sarif"}, "", func(o scanOptions) bool { return o.Config != nil && o.Config.SARIF && o.Config.Repo == "d" }},
		{[]string{"--repo", "d", "--format", "json"}, "", func(o scanOptions) bool { return o.Config != nil && o.Config.JSON && !o.Config.SARIF }},
		{[]string{"--repo", "d"}, "", func(o scanOptions) bool { return o.Config != nil && !o.Config.JSON && !o.Config.SARIF }},
		{[]string{"--config", "f.json"}, "", func(o scanOptions) bool {
			return o.Config != nil && len(o.Config.Files) == 1 && o.Config.Files[0] == "f.json"
		}},
		{[]string{"--repo", "d", "--fail-on", "changed,unpinned", "--lock", "l.json", "--approve", "--no-local", "--suppressions", "s.yaml"}, "", func(o scanOptions) bool {
			c := o.Config
			return c != nil && c.FailOn.changed && c.FailOn.unpinned && c.Lock == "l.json" && c.Approve && c.NoLocal && c.Suppressions == "s.yaml" && !c.Now.IsZero()
		}},
		{[]string{"--repo", "d", "--json", "--format", "sarif"}, "choose one", nil},
		{[]string{"--repo", "d", "http://x/mcp"}, "takes no URL", nil},
		{[]string{"--json", "http://x/mcp"}, "--json goes with --config or --repo", nil},
		{[]string{"--approve", "http://x/mcp"}, "--approve goes with", nil},
		{[]string{"--format", "xml", "http://x/mcp"}, "want json or sarif", nil},
		{[]string{"npm:pkg"}, "exact version", nil},
		{[]string{"http://x/mcp", "--lock", "l.json", "--format", "sarif"}, "", func(o scanOptions) bool {
			return o.Config == nil && o.Target == "http://x/mcp" && o.Lock == "l.json" && o.Format == "sarif"
		}},
	}
	for _, tc := range tests {
		env := &cmdEnv{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		o, err := parseScan(env, tc.args)
		var u usageError
		switch {
		case tc.usage != "" && (!errors.As(err, &u) || !strings.Contains(err.Error(), tc.usage)):
			t.Errorf("%q: error %v, want a usage error saying %q", tc.args, err, tc.usage)
		case tc.usage == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.usage == "" && !tc.check(o):
			t.Errorf("%q: options %+v", tc.args, o)
		}
	}
}

// TestScanRunFunction scans a loopback server through the run function, no
// flags parsed.
func TestScanRunFunction(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "opts", Version: "1"}, nil)
	addTool(s, "run_shell", "run a command", `{"type":"object","properties":{"command":{"type":"string"}}}`)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	var out, errb bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &errb}
	o := scanOptions{Target: ts.URL + "/mcp", Format: "json", Probe: probe.Options{Timeout: 20 * time.Second}}
	if err := runScanOpts(context.Background(), env, o); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), `"tool": "run_shell"`) || !strings.Contains(out.String(), "gg:command-string") {
		t.Errorf("stdout %s", out.String())
	}
}
