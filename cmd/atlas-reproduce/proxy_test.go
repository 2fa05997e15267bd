package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// labelsOfTool returns the proxy's _meta member of a listed tool.
func labelsOfTool(t *testing.T, tool *mcp.Tool) map[string]any {
	t.Helper()
	v, ok := tool.Meta["io.github.atlas-reproduce/param-risk"].(map[string]any)
	if !ok {
		b, _ := json.Marshal(tool)
		t.Fatalf("tool %s has no labels: %s", tool.Name, b)
	}
	return v
}

// TestProxyCommand puts the proxy in front of this binary's own MCP server
// (serve --stdio, started per session through --upstream-cmd), reached
// over stdio and over HTTP.
func TestProxyCommand(t *testing.T) {
	upstreamCmd := binary + " serve --stdio"
	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(binary, "proxy", "--stdio", "--upstream-cmd", upstreamCmd, "--deny", "gg:command-string")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 || res.Tools[0].Name != "classify_tools" {
			t.Fatalf("tools %+v", res.Tools)
		}
		l := labelsOfTool(t, res.Tools[0])
		if l["rules"] != "draft-correctover-gg-mcp-parameter-risk-01" {
			t.Errorf("labels %v", l)
		}
		// The relayed call still works: the labels are advisory.
		out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "classify_tools", Arguments: map[string]any{
			"schema": map[string]any{"properties": map[string]any{"command": map[string]any{"type": "string"}}},
		}})
		if err != nil || out.IsError || !strings.Contains(out.Content[0].(*mcp.TextContent).Text, "gg:command-string") {
			t.Errorf("call: %v %+v", err, out)
		}
	})
	t.Run("http", func(t *testing.T) {
		cmd := exec.Command(binary, "proxy", "--listen", "127.0.0.1:0", "--upstream-cmd", upstreamCmd)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
		}()
		br := bufio.NewReader(stderr)
		line, err := br.ReadString('\n')
		m := regexp.MustCompile(`serving on (http://\S+)`).FindStringSubmatch(line)
		if err != nil || m == nil {
			t.Fatalf("proxy did not report its address: %q, %v", line, err)
		}
		go func() { // keep the pipe drained
			for {
				if _, err := br.ReadString('\n'); err != nil {
					return
				}
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m[1]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		labelsOfTool(t, res.Tools[0])
		cs.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("after SIGTERM: %v, want exit 0", err)
		}
	})
}

func TestProxyUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "no upstream"},
		{[]string{"proxy", "--upstream", "http://x/mcp", "--upstream-cmd", "x"}, "not both"},
		{[]string{"proxy", "--upstream", "http://x/mcp", "--deny", "gg:nope"}, "unknown class"},
		{[]string{"proxy", "--upstream", "http://x/mcp", "--hide", "command_string,nope"}, `unknown class "nope": want one of gg:command-string`},
		{[]string{"proxy", "--upstream-cmd", "'x"}, "unterminated"},
		{[]string{"proxy", "--upstream", "http://x/mcp", "extra"}, "no arguments"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, code := run(t, "", c.args...)
			if code != exitUsage || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %q", code, stderr, exitUsage, c.want)
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		stdout, _, code := run(t, "", "proxy", "--help")
		if code != exitOK || !strings.Contains(stdout, "--upstream-cmd") || !strings.Contains(stdout, "--allow-tool") {
			t.Errorf("exit %d, stdout %q", code, stdout)
		}
	})
}

// TestParseProxy: what proxy's flags become, without running it.
func TestParseProxy(t *testing.T) {
	var out strings.Builder
	env := &cmdEnv{stdout: &out, stderr: &out}
	o, err := parseProxy(env, []string{"--upstream-cmd", "srv --x 'a b'", "--stdio", "--deny", "command_string",
		"--event-bytes", "1000", "--event-age", "30s", "--resume-wait", "5s", "--memory-limit", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.stdio || !o.memLimitGiven || o.memLimit != 0 || o.cfg.EventBytes != 1000 || o.cfg.EventAge != 30*time.Second || o.cfg.ResumeWait != 5*time.Second {
		t.Errorf("options %+v", o)
	}
	if got := strings.Join(o.cfg.Upstream.Command, "|"); got != "srv|--x|a b" {
		t.Errorf("command %q", got)
	}
	if len(o.cfg.Policy.Deny) != 1 {
		t.Errorf("deny %q", o.cfg.Policy.Deny)
	}
	for _, bad := range [][]string{{"--upstream", "http://x/mcp", "--event-age", "0s"}, {"--upstream", "http://x/mcp", "--event-bytes", "-1"}, {"--upstream", "http://x/mcp", "--resume-wait", "-1s"}} {
		if _, err := parseProxy(env, bad); err == nil || !strings.Contains(err.Error(), "want a positive number") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
