package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Revision 2026-07-28 has no server-to-client requests: a tool that needs
// the client's input answers with resultType "input_required", naming the
// requests it would have made (inputRequests, each a method and params)
// and an opaque requestState, and the client calls again with its answers
// (inputResponses) and the state. A session of an older revision bridged
// to such a server (see bridge.go) gets those requests as the server's
// requests of its own revision (sampling/createMessage,
// elicitation/create, roots/list) on the call's stream; the proxy sends
// the call again with the client's answers, and the client sees the
// call's final answer only, as it would from a server of its revision.
// The Go SDK's server does the same for its own older clients
// (serverMultiRoundTripMiddleware).

// maxInputRounds bounds the input rounds of one call, as the SDKs do.
const maxInputRounds = 10

// inputCapability is the client capability each translated request needs.
var inputCapability = map[string]string{
	"sampling/createMessage": "sampling",
	"elicitation/create":     "elicitation",
	"roots/list":             "roots",
}

// inputMethods are the methods whose result may ask for input.
var inputMethods = []string{"tools/call", "prompts/get", "resources/read"}

// inputCall is a call of a translated session that may be answered with
// input_required: the request as last sent upstream, and its rounds.
type inputCall struct {
	req    *jsonrpc.Request
	rounds int
}

// inputRequest is one of an input_required result's requests.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// inputRequired reads an input_required result: its requests and state.
func inputRequired(result json.RawMessage) (map[string]inputRequest, json.RawMessage, bool) {
	var r struct {
		ResultType    string                  `json:"resultType"`
		InputRequests map[string]inputRequest `json:"inputRequests"`
		RequestState  json.RawMessage         `json:"requestState"`
	}
	if json.Unmarshal(result, &r) != nil || r.ResultType != "input_required" {
		return nil, nil, false
	}
	return r.InputRequests, r.RequestState, true
}

// noteInputCall records a call of a translated session that may be
// answered with input_required.
func (c *streamConn) noteInputCall(req *jsonrpc.Request) {
	if !req.IsCall() || !slices.Contains(inputMethods, req.Method) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inputCalls == nil {
		c.inputCalls = map[any]*inputCall{}
	}
	c.inputCalls[req.ID.Raw()] = &inputCall{req: req}
}

// settleInputCall forgets a call once it is answered.
func (c *streamConn) settleInputCall(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.inputCalls, id.Raw())
	c.mu.Unlock()
}

// inputAnswer hands the client's answer to a translated input request to
// its waiter, reporting whether it was one.
func (c *streamConn) inputAnswer(resp *jsonrpc.Response) bool {
	c.mu.Lock()
	ch, ok := c.inputWaits[resp.ID.Raw()]
	delete(c.inputWaits, resp.ID.Raw())
	c.mu.Unlock()
	if ok {
		ch <- resp // buffered: never waits
	}
	return ok
}

// takeInput starts the input round of the call an input_required result
// answers, reporting whether it did (false: the call is no translated
// session's, and the result is answered as an error).
func (c *streamConn) takeInput(id jsonrpc.ID, result json.RawMessage) bool {
	reqs, state, ok := inputRequired(result)
	if !ok {
		return false
	}
	c.mu.Lock()
	call := c.inputCalls[id.Raw()]
	var caps map[string]json.RawMessage
	if call != nil {
		call.rounds++
		json.Unmarshal(c.bridge.meta[mcp.MetaKeyClientCapabilities], &caps)
	}
	c.mu.Unlock()
	if call == nil {
		return false
	}
	fail := func(msg string) {
		c.settleInputCall(id)
		c.deliver(errorResponse(id, CodeUpstream, "upstream: "+msg, nil))
	}
	if call.rounds > maxInputRounds {
		fail(fmt.Sprintf("the server asked the client for input more than %d times in one call", maxInputRounds))
		return true
	}
	keys := make([]string, 0, len(reqs))
	for k, r := range reqs {
		keys = append(keys, k)
		capName, known := inputCapability[r.Method]
		switch {
		case !known:
			fail(fmt.Sprintf("the server asks the client for %q (an input_required result of revision %s), which has no request in this session's revision; the proxy cannot translate it", r.Method, statelessVersion))
			return true
		case caps[capName] == nil:
			fail(fmt.Sprintf("the server asks the client for %s (an input_required result of revision %s), but this session's client did not declare the %q capability", r.Method, statelessVersion, capName))
			return true
		}
	}
	slices.Sort(keys)
	if !c.spawn(func() { c.runInput(call, keys, reqs, state) }) {
		return true // closed: nobody waits for the answer
	}
	return true
}

// runInput sends the client the requests of one input round, waits for
// its answers, and sends the call again with them.
func (c *streamConn) runInput(call *inputCall, keys []string, reqs map[string]inputRequest, state json.RawMessage) {
	id := call.req.ID
	fail := func(msg string) {
		c.settleInputCall(id)
		c.deliver(errorResponse(id, CodeUpstream, "upstream: "+msg, nil))
	}
	waits := make([]chan *jsonrpc.Response, len(keys))
	for i, k := range keys {
		c.mu.Lock()
		c.inputSeq++
		rid, _ := jsonrpc.MakeID(fmt.Sprintf("atlas-proxy-input-%d", c.inputSeq))
		waits[i] = make(chan *jsonrpc.Response, 1)
		if c.inputWaits == nil {
			c.inputWaits = map[any]chan *jsonrpc.Response{}
		}
		c.inputWaits[rid.Raw()] = waits[i]
		c.mu.Unlock()
		req := &jsonrpc.Request{ID: rid, Method: reqs[k].Method, Params: reqs[k].Params}
		c.related.Store(req, id) // on the call's own stream
		if !c.deliver(req) {
			return
		}
	}
	responses := map[string]json.RawMessage{}
	for i, k := range keys {
		var resp *jsonrpc.Response
		select {
		case resp = <-waits[i]:
		case <-c.ctx.Done():
			return
		}
		if resp.Error != nil {
			fail(fmt.Sprintf("the client answered the server's %s with an error: %v", reqs[k].Method, resp.Error))
			return
		}
		responses[k] = resp.Result
	}
	retry, err := withInputResponses(call.req, responses, state)
	if err != nil {
		fail(err.Error())
		return
	}
	c.mu.Lock()
	call.req = retry
	c.mu.Unlock()
	data, err := jsonrpc.EncodeMessage(retry)
	if err != nil {
		fail(err.Error())
		return
	}
	c.answerFailure(id, c.post(data, id, false))
}

// withInputResponses is req with the client's answers and the server's
// state in its params (those of an earlier round replaced).
func withInputResponses(req *jsonrpc.Request, responses map[string]json.RawMessage, state json.RawMessage) (*jsonrpc.Request, error) {
	params := map[string]json.RawMessage{}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &params); err != nil || params == nil {
			return nil, errors.New("the call's params are not an object")
		}
	}
	var err error
	if params["inputResponses"], err = json.Marshal(responses); err != nil {
		return nil, err
	}
	delete(params, "requestState")
	if len(state) > 0 && strings.TrimSpace(string(state)) != "null" {
		params["requestState"] = state
	}
	out := *req
	out.Params, err = json.Marshal(params)
	return &out, err
}
