package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A session of an older revision (initialize, then requests in a session)
// reaches a server of revision 2026-07-28 through a bridge: the upstream
// client tries server/discover first, as the specification's version
// negotiation has it, and when the server speaks the stateless revision it
// answers the client's initialize from the discover result, and sends each
// later request alone, with the _meta triple (protocol version, the
// client's info and capabilities, from its initialize) and the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. A server that
// does not speak it gets the initialize (and, failing that, legacy SSE).

// bridge is what a stateless upstream needs of the session's client.
type bridge struct {
	meta   map[string]json.RawMessage // the _meta triple
	answer json.RawMessage            // the InitializeResult given to the client
	// supported are the revisions the server's discover result named.
	supported []string
	// legacy: the client speaks an older revision, so the session is
	// translated (see legacyResult).
	legacy bool
}

// speaksLegacy reports whether the server named a revision older than the
// stateless one: it then takes an initialize.
func (b *bridge) speaksLegacy() bool {
	return slices.ContainsFunc(b.supported, func(v string) bool { return v < statelessVersion })
}

// withMeta returns req with the triple added to its params' _meta (members
// the client set itself are kept).
func (b *bridge) withMeta(req *jsonrpc.Request) (*jsonrpc.Request, error) {
	params := map[string]json.RawMessage{}
	if len(req.Params) > 0 && !bytes.Equal(bytes.TrimSpace(req.Params), []byte("null")) {
		if err := json.Unmarshal(req.Params, &params); err != nil {
			return nil, fmt.Errorf("params of %s are not an object", req.Method)
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := params["_meta"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("_meta of %s is not an object", req.Method)
		}
	}
	for k, v := range b.meta {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	out := *req
	out.Params, err = json.Marshal(params)
	return &out, err
}

// discover asks the upstream for server/discover on behalf of the client
// whose initialize is init; it returns the bridge when the server speaks
// the stateless revision, nil (and no error worth telling) otherwise.
func (c *streamConn) discover(init *jsonrpc.Request) *bridge {
	var ip struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(init.Params, &ip) != nil {
		return nil
	}
	version, _ := json.Marshal(statelessVersion)
	meta := map[string]json.RawMessage{mcp.MetaKeyProtocolVersion: version}
	if len(ip.ClientInfo) > 0 {
		meta[mcp.MetaKeyClientInfo] = ip.ClientInfo
	}
	if len(ip.Capabilities) > 0 {
		meta[mcp.MetaKeyClientCapabilities] = ip.Capabilities
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "atlas-proxy-discover", "method": "server/discover",
		"params": map[string]any{"_meta": meta}})
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", statelessVersion)
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil
	}
	result, err := readResult(resp, c.maxMessage)
	if err != nil {
		return nil
	}
	var dr struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      json.RawMessage            `json:"capabilities"`
		Instructions      string                     `json:"instructions,omitempty"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(result, &dr) != nil || !slices.Contains(dr.SupportedVersions, statelessVersion) {
		return nil
	}
	// The client is answered in its own revision when the proxy speaks
	// it, else in the newest older one.
	v := legacyVersions[0]
	if slices.Contains(legacyVersions, ip.ProtocolVersion) {
		v = ip.ProtocolVersion
	}
	info := dr.Meta[mcp.MetaKeyServerInfo]
	if len(info) == 0 {
		info = json.RawMessage(`{"name":"upstream","version":""}`)
	}
	caps := dr.Capabilities
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`)
	}
	answer, err := json.Marshal(map[string]any{"protocolVersion": v, "capabilities": caps, "serverInfo": info,
		"instructions": dr.Instructions})
	if err != nil {
		return nil
	}
	return &bridge{meta: meta, answer: answer, supported: dr.SupportedVersions,
		legacy: ip.ProtocolVersion < statelessVersion}
}

// probeLegacy sends the client's initialize to a server whose discover
// result named the stateless revision alone, and then a ping at the
// revision it answered with: when both are answered, the server serves
// the client's revision after all, the connection is that session's, and
// the initialize's answer is returned; otherwise nil (and the session the
// initialize may have opened is ended).
func (c *streamConn) probeLegacy(init *jsonrpc.Request) *jsonrpc.Response {
	data, err := jsonrpc.EncodeMessage(init)
	if err != nil {
		return nil
	}
	post := func(body []byte, version, sid string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		return c.client.Do(req)
	}
	resp, err := post(data, "", "")
	if err != nil {
		return nil
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	result, err := readResult(resp, c.maxMessage)
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err != nil || json.Unmarshal(result, &ir) != nil || ir.ProtocolVersion == "" || ir.ProtocolVersion >= statelessVersion {
		return nil
	}
	ping := []byte(`{"jsonrpc":"2.0","id":"atlas-proxy-probe","method":"ping"}`)
	presp, err := post(ping, ir.ProtocolVersion, sid)
	if err == nil {
		_, err = readResult(presp, c.maxMessage)
	}
	if err != nil {
		if sid != "" {
			if req, rerr := http.NewRequestWithContext(c.ctx, http.MethodDelete, c.url, nil); rerr == nil {
				req.Header.Set("Mcp-Session-Id", sid)
				if r, derr := c.client.Do(req); derr == nil {
					r.Body.Close()
				}
			}
		}
		return nil
	}
	c.mu.Lock()
	c.sessionID, c.version = sid, ir.ProtocolVersion
	c.mu.Unlock()
	return &jsonrpc.Response{ID: init.ID, Result: result}
}

// bridgeHeaders sets the stateless revision's headers of a request body.
func bridgeHeaders(h http.Header, body []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "" {
		return
	}
	h.Set("Mcp-Method", msg.Method)
	switch msg.Method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", msg.Params.Name)
	case "resources/read":
		h.Set("Mcp-Name", msg.Params.URI)
	}
}

// readResult reads the result of the one answer in resp (JSON or an event
// stream); a JSON-RPC error is returned as the error.
func readResult(resp *http.Response, max int64) (json.RawMessage, error) {
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var result json.RawMessage
	var rerr error
	one := func(data []byte) {
		m, err := jsonrpc.DecodeMessage(data)
		if r, ok := m.(*jsonrpc.Response); err == nil && ok && result == nil && rerr == nil {
			if r.Error != nil {
				rerr = r.Error
				return
			}
			result = r.Result
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		if err := readEvents(resp.Body, max, one); err != nil {
			return nil, err
		}
	} else {
		data, err := io.ReadAll(io.LimitReader(resp.Body, max))
		if err != nil {
			return nil, err
		}
		one(data)
	}
	if rerr != nil {
		return nil, rerr
	}
	if result == nil {
		return nil, errors.New("no answer")
	}
	return result, nil
}

// bridged handles a message of a bridged session that is not sent as it
// is: the initialize (answered from the discover result), the initialized
// notification and answers to server requests (which the stateless
// revision has no channel for; those to the requests the proxy made of an
// input_required result go to their round, see inputrequired.go) are not
// sent; a request gains the triple.
// It returns the message to send, or nil.
func (c *streamConn) bridged(msg jsonrpc.Message) (jsonrpc.Message, error) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		if resp, ok := msg.(*jsonrpc.Response); ok {
			c.inputAnswer(resp)
		}
		return nil, nil
	}
	switch {
	case req.Method == "initialize" && req.IsCall():
		c.deliver(&jsonrpc.Response{ID: req.ID, Result: c.bridge.answer})
		return nil, nil
	case req.Method == "notifications/initialized":
		return nil, nil
	}
	out, err := c.bridge.withMeta(req)
	if err == nil && c.bridge.legacy {
		c.noteInputCall(out)
	}
	return out, err
}

// statelessOnly are the result members the stateless revision added, which
// an older revision's client must not see.
var statelessOnly = []string{"resultType", "ttlMs", "cacheScope"}

// statelessMeta are the _meta keys the stateless revision added to
// results.
var statelessMeta = []string{mcp.MetaKeyServerInfo, mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// legacyResult translates a stateless upstream's result for a client of
// an older revision: the members that revision does not define are
// removed (an empty _meta with them). A result asking for the client's
// input (resultType "input_required") that the session could not
// translate (see inputrequired.go) has no older form: it is an error.
func legacyResult(result json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil || m == nil {
		return result, nil
	}
	var rt string
	if json.Unmarshal(m["resultType"], &rt) == nil && rt != "" && rt != "complete" {
		return nil, &jsonrpc.Error{Code: CodeUpstream, Message: fmt.Sprintf(
			"upstream: the server answered with a %q result of revision %s (it asks the client for input), which has no form in this session's revision; the proxy does not translate it",
			rt, statelessVersion)}
	}
	changed := false
	for _, k := range statelessOnly {
		if _, ok := m[k]; ok {
			delete(m, k)
			changed = true
		}
	}
	if raw, ok := m["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) == nil && meta != nil {
			n := len(meta)
			for _, k := range statelessMeta {
				delete(meta, k)
			}
			if len(meta) != n {
				changed = true
				if len(meta) == 0 {
					delete(m, "_meta")
				} else {
					m["_meta"], _ = json.Marshal(meta)
				}
			}
		}
	}
	if !changed {
		return result, nil
	}
	out, err := json.Marshal(m)
	if err != nil {
		return result, nil
	}
	return out, nil
}
