package serve

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
)

// callText calls classify_tools and returns its text content, checking that
// the structured content holds the same value.
func callText(t *testing.T, cs *mcp.ClientSession, args json.RawMessage) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: toolName, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%d content items, want 1", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	if res.IsError {
		return text.Text, true
	}
	var fromText any
	if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil {
		t.Fatalf("text content is not JSON: %v", err)
	}
	// The client decodes structured content into Go values; compare values.
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var fromStructured any
	json.Unmarshal(sc, &fromStructured)
	if !reflect.DeepEqual(fromText, fromStructured) {
		t.Fatalf("structured content %s differs from text content %s", sc, text.Text)
	}
	return text.Text, false
}

func connectHTTP(t *testing.T, base string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: client(t)}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestMCPOverHTTPMatchesClassify calls classify_tools through the SDK's
// client over loopback and requires the objects /v1/classify answers (held
// to CPython by TestClassifyMatchesCPython) for the real tools.
func TestMCPOverHTTPMatchesClassify(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	_, base := testServer(t, Config{})
	cs := connectHTTP(t, base)
	if got, want := cs.InitializeResult().ServerInfo, buildinfo.Read().Version; got == nil || got.Name != "atlas-reproduce" || got.Version != want {
		t.Errorf("serverInfo %+v, want atlas-reproduce version %q (the build's)", got, want)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != toolName || tools.Tools[0].OutputSchema == nil ||
		tools.Tools[0].Annotations == nil || !tools.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("tools/list: %+v", tools.Tools)
	}
	hc := client(t)
	all := innerTools(t)
	batches := [][][]byte{all[:1], all[1:4], all[100:1100], all}
	for _, b := range batches {
		list := toolsList(b)
		_, _, want := post(t, hc, base+"/v1/classify", "application/json", list)
		got, isErr := callText(t, cs, list)
		if isErr || got+"\n" != string(want) {
			t.Fatalf("%d tools: error %v\n got: %.300s\nwant: %.300s", len(b), isErr, got, want)
		}
	}
	for _, tool := range all[:50] {
		var v struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		json.Unmarshal(tool, &v)
		if v.InputSchema == nil {
			continue
		}
		_, _, want := post(t, hc, base+"/v1/classify", "application/json", v.InputSchema)
		got, isErr := callText(t, cs, json.RawMessage(`{"schema": `+string(v.InputSchema)+`}`))
		if isErr || got+"\n" != string(want) {
			t.Fatalf("schema %s: error %v\n got: %s\nwant: %s", v.InputSchema, isErr, got, want)
		}
	}
}

// TestMCPKeepsPropertyOrder: the answer lists properties in the order the
// schema has them, as classify does, which a decode into Go maps would lose.
func TestMCPKeepsPropertyOrder(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	_, base := testServer(t, Config{})
	cs := connectHTTP(t, base)
	got, isErr := callText(t, cs, json.RawMessage(`{"schema": {"properties": {"zeta_path": {}, "alpha_token": {}, "mid": {}, "zeta_path": {"description": "url"}}}}`))
	if isErr {
		t.Fatal(got)
	}
	z, a, m := strings.Index(got, `"zeta_path"`), strings.Index(got, `"alpha_token"`), strings.Index(got, `"mid"`)
	if !(z >= 0 && z < a && a < m) || !strings.Contains(got, `"name": "zeta_path", "where": "properties", "required": false, "classes": ["gg:url-endpoint"]`) {
		t.Fatalf("order or duplicate-key semantics lost: %s", got)
	}
}

func TestMCPBadArguments(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	_, base := testServer(t, Config{})
	cs := connectHTTP(t, base)
	for _, tc := range []struct{ args, want string }{
		{`{}`, `want exactly one of "tools" or "schema", got []`},
		{`{"tools": [], "schema": {}}`, `got ["schema", "tools"]`},
		{`{"tool": {}}`, `got ["tool"]`},
		{`{"tools": 3}`, `"tools" is not a list`},
		{`{"tools": [1]}`, `"tools"[0] is not a JSON object`},
	} {
		got, isErr := callText(t, cs, json.RawMessage(tc.args))
		if !isErr || !strings.Contains(got, tc.want) {
			t.Errorf("%s: error %v, %q; want a tool error containing %q", tc.args, isErr, got, tc.want)
		}
	}
	// Tool calls count in the metrics too.
	callText(t, cs, json.RawMessage(`{"schema": {"properties": {"a": {}, "b": {}}}}`))
	m := scrape(t, client(t), base)
	if m["atlas_serve_tools_classified_total"] != 1 || m["atlas_serve_properties_classified_total"] != 2 || m[`atlas_serve_requests_total{code="200",route="/mcp"}`] < 7 {
		t.Errorf("metrics after MCP calls: %v", m)
	}
}

// TestMCPOverPipes runs the stdio server on pipes with the SDK's client,
// as --stdio does on the process's stdin and stdout; the client hanging up
// is a clean stop.
func TestMCPOverPipes(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	s := New(Config{})
	cr, sw := io.Pipe() // server to client
	sr, cw := io.Pipe() // client to server
	done := make(chan error, 1)
	go func() {
		err := s.ServeStdio(context.Background(), sr, sw)
		sw.Close()
		done <- err
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, isErr := callText(t, cs, json.RawMessage(`{"tools": [{"name": "run", "inputSchema": {"properties": {"command": {}}}}]}`))
	want := `{"tools": [{"server_id": null, "tool": "run", "classes": ["gg:command-string"], "required_classes": [], "buckets": [], "properties": [{"name": "command", "where": "properties", "required": false, "classes": ["gg:command-string"], "buckets": []}]}]}`
	if isErr || got != want {
		t.Errorf("got %s", got)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio after the client hung up: %v", err)
	}
}
