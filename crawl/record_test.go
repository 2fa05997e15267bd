package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestProbeKeepsInitialize(t *testing.T) {
	instr := "Use the tools with care."
	cases := []struct {
		name      string
		url       func(t *testing.T) string
		reachable bool
		kind      string
		tools     int
		toolsCap  bool
		caps      string
		instr     *string
	}{
		{name: "SDK server with instructions", url: func(t *testing.T) string {
			s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.2.3"}, &mcp.ServerOptions{Instructions: instr})
			for _, tl := range crawltest.GenTools(2, "i") {
				s.AddTool(tl.SDKTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
			}
			return crawltest.Serve(t, crawltest.MCPHandler(s)).URL
		}, reachable: true, tools: 2, toolsCap: true, caps: `"tools":{"listChanged":true}`, instr: &instr},
		{name: "SDK server without tools", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.MCPHandler(crawltest.NewSDKServer(nil, 0))).URL
		}, reachable: true, tools: 0, toolsCap: false},
		{name: "no tools capability, tools/list refused", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{
				"initialize": `{"protocolVersion":"2025-03-26","capabilities":{"prompts":{}},"serverInfo":{"name":"hand-written","version":"0"}}`,
			})).URL
		}, reachable: true, tools: 0, toolsCap: false, caps: `{"prompts":{}}`},
		{name: "tools/list fails after initialize", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult})).URL
		}, kind: probe.KindRPCError, toolsCap: true, caps: `{"tools":{}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := crawltest.ProbeOnce(t, probe.Options{}, c.url(t))
			if r.Reachable != c.reachable || r.ErrorKind != c.kind || len(r.Tools) != c.tools {
				t.Fatalf("reachable=%v kind %q (%s) %d tools; want %v %q %d", r.Reachable, r.ErrorKind, r.Error, len(r.Tools), c.reachable, c.kind, c.tools)
			}
			if !r.Initialized || r.Transport != probe.TransportStreamable || r.ProtocolVersion == "" || len(r.ServerInfo) == 0 {
				t.Errorf("initialize not kept: %+v", r)
			}
			if r.ToolsCapability != c.toolsCap || !strings.Contains(string(r.Capabilities), c.caps) {
				t.Errorf("tools capability %v, capabilities %s; want %v with %s", r.ToolsCapability, r.Capabilities, c.toolsCap, c.caps)
			}
			if (r.Instructions == nil) != (c.instr == nil) || (c.instr != nil && *r.Instructions != *c.instr) {
				t.Errorf("instructions %v, want %v", r.Instructions, c.instr)
			}
			e := newEntry(&target{id: "x", url: "x"}, &r)
			b, _ := json.Marshal(e.Server)
			for _, key := range []string{`"transport":`, `"protocol_version":`, `"server_info":`, `"capabilities":`, fmt.Sprintf(`"tools_capability":%v`, c.toolsCap)} {
				if !strings.Contains(string(b), key) {
					t.Errorf("record %s lacks %s", b, key)
				}
			}
		})
	}
}

// TestRecordKeepsNegotiation: a server's record says which generation
// answered and which step failed, as the probe found them
// (crawl/probe's TestNegotiation), reachable or not.
func TestRecordKeepsNegotiation(t *testing.T) {
	for _, r := range []probe.Result{
		{Reachable: true, Initialized: true, Transport: probe.TransportStreamable, ProtocolVersion: probe.StatelessVersion, Generation: probe.GenerationStateless},
		{Reachable: true, Initialized: true, Transport: probe.TransportStreamable, ProtocolVersion: "2025-03-26", Generation: probe.GenerationSession},
		{ErrorKind: probe.KindRPCError, FailedStep: "initialize", SupportedVersions: []string{"2099-01-01"}},
		{ErrorKind: probe.KindRPCError, ProtocolVersion: "2025-03-26", Generation: probe.GenerationSession, FailedStep: "notifications/initialized"},
	} {
		e := newEntry(&target{id: "x", url: "x"}, &r)
		b, _ := json.Marshal(e.Server)
		if r.Generation != "" && !strings.Contains(string(b), `"generation":"`+r.Generation+`"`) {
			t.Errorf("record %s lacks the generation", b)
		}
		if r.FailedStep != "" && !strings.Contains(string(b), `"failed_step":"`+r.FailedStep+`"`) {
			t.Errorf("record %s lacks the failed step", b)
		}
	}
}
