package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// toolName is the MCP tool the server offers.
const toolName = "classify_tools"

const toolDescription = `Label the parameters of MCP tools with the gg: parameter risk classes ` +
	`(gg:credential-value, gg:filesystem-path, gg:command-string, gg:money-amount, gg:url-endpoint) ` +
	`from each property's name and description. Pass {"tools": [tool, ...]} (tool objects as tools/list ` +
	`returns them) or {"schema": {...}} (one input schema). The result is {"tools": [...]}: per tool its ` +
	`classes, the classes of its required parameters, contextual buckets, and per property the same. ` +
	`The labels are advisory lexical signals, not an authorization decision.`

// inputSchema is the classify_tools arguments. The properties are read raw
// (see callClassify), so the schema only documents them.
var inputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "tools": {"type": "array", "items": {"type": "object"}, "description": "MCP tool objects, each with name, description and inputSchema, as a tools/list result holds them"},
    "schema": {"type": "object", "description": "one tool input JSON Schema, classified as the schema of an unnamed tool"}
  },
  "additionalProperties": false
}`)

var stringList = `{"type": "array", "items": {"type": "string"}}`

// outputSchema describes the structured result: the objects classify prints.
var outputSchema = json.RawMessage(`{
  "type": "object",
  "required": ["tools"],
  "properties": {
    "tools": {"type": "array", "items": {
      "type": "object",
      "required": ["server_id", "tool", "classes", "required_classes", "buckets", "properties"],
      "properties": {
        "server_id": {"type": ["string", "null"]},
        "tool": {"type": ["string", "null"]},
        "classes": ` + stringList + `,
        "required_classes": ` + stringList + `,
        "buckets": ` + stringList + `,
        "properties": {"type": "array", "items": {
          "type": "object",
          "required": ["name", "where", "required", "classes", "buckets"],
          "properties": {
            "name": {"type": "string"},
            "where": {"type": "string"},
            "required": {"type": "boolean"},
            "classes": ` + stringList + `,
            "buckets": ` + stringList + `
          }
        }}
      }
    }}
  }
}`)

func (s *Server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "atlas-reproduce", Version: buildinfo.Read().Version}, &mcp.ServerOptions{
		Instructions: "Call " + toolName + " with the tools a server lists (or one input schema) to learn which parameters carry credentials, paths, commands, money amounts or URLs.",
	})
	no := false
	// The handler reads the raw arguments: the generic mcp.AddTool would
	// decode them into Go maps, losing the order of properties (which
	// decides the order of the answer) and the duplicate-key semantics the
	// labeller reproduces.
	srv.AddTool(&mcp.Tool{
		Name:         toolName,
		Description:  toolDescription,
		InputSchema:  inputSchema,
		OutputSchema: outputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title: "Classify MCP tool parameters", ReadOnlyHint: true, IdempotentHint: true,
			DestructiveHint: &no, OpenWorldHint: &no,
		},
	}, s.callClassify)
	return srv
}

// mcpHandler serves the MCP server over Streamable HTTP, stateless and
// answering in plain JSON: every call stands alone, so there are no
// sessions to keep, no event streams held open, and any replica can answer.
func (s *Server) mcpHandler() http.Handler {
	srv := s.newMCPServer()
	return jsonErrors(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: s.cfg.MaxBody,
	}))
}

// jsonErrors turns the plain-text error answers of h (the MCP transport
// answers a wrong Content-Type or Accept header with http.Error) into the
// {"error": ...} every endpoint answers with.
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jw := &errorRewriter{ResponseWriter: w}
		h.ServeHTTP(jw, r)
		if jw.code != 0 {
			w.Header().Del("Content-Type")
			writeError(w, jw.code, apiError{Error: strings.TrimSpace(string(jw.text))})
		}
	})
}

// errorRewriter holds back a text/plain answer of 400 or more, keeping its
// code and text for jsonErrors.
type errorRewriter struct {
	http.ResponseWriter
	code int // the withheld status, or 0
	text []byte
}

func (e *errorRewriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(e.Header().Get("Content-Type"), "text/plain") {
		e.code = code
		return
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *errorRewriter) Write(b []byte) (int, error) {
	if e.code != 0 {
		e.text = append(e.text, b...)
		return len(b), nil
	}
	return e.ResponseWriter.Write(b)
}

func (e *errorRewriter) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok && e.code == 0 {
		f.Flush()
	}
}

func (e *errorRewriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// callClassify runs classify_tools. {"tools": [...]} is itself a record the
// labeller reads (a tools/list result), so it is classified as it came;
// {"schema": {...}} becomes the input schema of an unnamed tool.
func (s *Server) callClassify(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.Params.Arguments
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(args, &keys); err != nil {
		return toolError("arguments are not a JSON object: %v", err), nil
	}
	doc := []byte(args)
	switch _, tools := keys["tools"]; {
	case len(keys) != 1 || (!tools && keys["schema"] == nil):
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, fmt.Sprintf("%q", k))
		}
		sort.Strings(names)
		return toolError(`want exactly one of "tools" or "schema", got [%s]`, strings.Join(names, ", ")), nil
	case !tools:
		schema := keys["schema"]
		doc = make([]byte, 0, len(schema)+16)
		doc = append(append(append(doc, `{"inputSchema":`...), schema...), '}')
	}
	turn, err := s.labelTurn(ctx, doc)
	if err != nil {
		return nil, err
	}
	defer turn()
	out, err := s.mcpAnswer(doc)
	if err != nil {
		return toolError("%v", err), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(out)}},
		StructuredContent: json.RawMessage(out),
	}, nil
}

// mcpAnswer returns the {"tools": [...]} answer for doc, as /v1/classify
// answers it. A tool result is one JSON value, which the SDK holds, and
// encodes twice (text and structured content): the answer cannot be
// streamed, so it is bounded instead, by MaxTools and by MaxBody bytes.
func (s *Server) mcpAnswer(doc []byte) ([]byte, error) {
	out := []byte(`{"tools": [`)
	n := 0
	bound := func(b []byte) ([]byte, error) {
		if int64(len(b)) > s.cfg.MaxBody {
			return b, fmt.Errorf("the answer would exceed %d bytes, the server's limit (--max-body); send the tools in smaller calls", s.cfg.MaxBody)
		}
		return b, nil
	}
	err := s.label(doc, false, func(t *label.ToolLabels) error {
		if n++; n > 1 {
			out = append(out, ", "...)
		}
		var err error
		out, err = appendTool(out, t, bound)
		return err
	})
	return append(out, "]}"...), err
}

// toolError is a failed call the calling model can read and correct.
func toolError(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
}
