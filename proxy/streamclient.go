package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"
)

// streamConn is the client side of the Streamable HTTP transport, as an
// mcp.Connection that relays messages as they are. The SDK's
// StreamableClientTransport opens its standalone event stream (the one a
// server's list_changed notifications and requests arrive on outside a
// call) only when an SDK ClientSession tells it initialization is done,
// which a raw relay has no way to do; this connection watches the
// initialize exchange pass through instead, and opens the stream itself.
type streamConn struct {
	url    string
	client *http.Client
	// maxMessage bounds one JSON answer or one event's data.
	maxMessage int64

	ctx    context.Context // cancelled by Close: ends every request
	cancel context.CancelFunc

	incoming chan jsonrpc.Message
	// calls bounds the calls posted at once over every session (shared)
	// and in this one (its own): a batch of thousands of calls must not
	// open thousands of connections.
	calls        *semaphore.Weighted
	sessionCalls *semaphore.Weighted
	failOnce     sync.Once
	failErr      error
	failed       chan struct{}
	wg           sync.WaitGroup
	translated   func() // see callLimits
	resumed      func() // see callLimits
	// related maps a server's message read on a call's event stream to
	// the call, until the relay asks (see relatedTo).
	related sync.Map

	mu        sync.Mutex
	sessionID string
	version   string // negotiated protocol version, for the header
	initID    any    // id of the initialize request, until answered
	listening bool   // the standalone stream was opened
	closed    bool
	// bridge, once set (before any request but the initialize), makes
	// this a stateless upstream's connection (see bridge.go).
	bridge *bridge
	// spare is the bridge to a server whose discover result named the
	// client's revision too, taken when it refuses the initialize anyway
	// (see refusedInit).
	spare *bridge
	// inputCalls are a translated session's calls that may be answered
	// with input_required, by id; inputWaits take the client's answers to
	// the requests the proxy made of them, by the request's id (see
	// inputrequired.go).
	inputCalls map[any]*inputCall
	inputWaits map[any]chan *jsonrpc.Response
	inputSeq   int64
}

// useBridge makes this a stateless upstream's connection.
func (c *streamConn) useBridge(b *bridge) {
	c.mu.Lock()
	c.bridge, c.version, c.spare = b, statelessVersion, nil
	c.mu.Unlock()
	if b.legacy {
		c.onTranslate()
	}
}

// refusedInit reports whether r refuses the initialize as a version the
// server does not speak while a spare bridge is at hand; the connection
// is then bridged, and the caller answers the initialize from the
// bridge.
func (c *streamConn) refusedInit(r *jsonrpc.Response) bool {
	c.mu.Lock()
	b := c.spare
	isInit := c.initID != nil && r.ID.Raw() == c.initID
	c.mu.Unlock()
	var je *jsonrpc.Error
	if b == nil || !isInit || !errors.As(r.Error, &je) || je.Code != codeUnsupportedVersion {
		return false
	}
	c.mu.Lock()
	c.initID = nil
	c.mu.Unlock()
	c.useBridge(b)
	return true
}

func newStreamConn(url string, client *http.Client, maxMessage int64, lim callLimits) *streamConn {
	ctx, cancel := context.WithCancel(context.Background())
	if lim.global == nil {
		lim.global = semaphore.NewWeighted(DefaultMaxCalls)
	}
	return &streamConn{
		url: url, client: client, maxMessage: maxMessage, ctx: ctx, cancel: cancel,
		incoming: make(chan jsonrpc.Message, 16), failed: make(chan struct{}),
		calls: lim.global, sessionCalls: semaphore.NewWeighted(int64(max(lim.perSession, 1))),
		translated: lim.translated, resumed: lim.resumed,
	}
}

// onTranslate tells the proxy that this session is translated between
// revisions.
func (c *streamConn) onTranslate() {
	if c.translated != nil {
		c.translated()
	}
}

// callLimits bound the calls in flight to an HTTP upstream, and say whom
// to tell of a translated session.
type callLimits struct {
	global     *semaphore.Weighted
	perSession int
	// translated, when set, is called once a session of an older revision
	// is bridged to a server that speaks only the stateless one.
	translated func()
	// resumed, when set, is called each time a call's stream is resumed
	// from the upstream.
	resumed func()
}

// spawn runs fn in a goroutine Close waits for, unless the connection is
// closed: the Add happens under the lock Close sets closed under, so that
// no Add can race Close's Wait.
func (c *streamConn) spawn(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

// SessionID implements mcp.Connection.
func (c *streamConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

func (c *streamConn) fail(err error) {
	c.failOnce.Do(func() {
		c.failErr = err
		close(c.failed)
	})
}

// Read implements mcp.Connection.
func (c *streamConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.failed:
		// Deliver what arrived before the failure first.
		select {
		case m := <-c.incoming:
			return m, nil
		default:
		}
		return nil, c.failErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands a message to Read; false means the connection is gone.
func (c *streamConn) deliver(m jsonrpc.Message) bool {
	select {
	case c.incoming <- m:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *streamConn) newRequest(method string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, c.url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.mu.Lock()
	if c.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.sessionID)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	bridged := c.bridge != nil
	c.mu.Unlock()
	if bridged && body != nil {
		bridgeHeaders(req.Header, body)
	} else if v := metaVersion(body); v >= statelessVersion {
		// A request of the stateless revision from a client that speaks
		// it (over stdio): relayed as that revision's, with its headers.
		req.Header.Set("Mcp-Protocol-Version", v)
		bridgeHeaders(req.Header, body)
	}
	return req, nil
}

// Write implements mcp.Connection: one POST per message. The answer, a
// JSON body or an event stream, is read in the background.
func (c *streamConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.failed:
		return c.failErr
	default:
	}
	c.mu.Lock()
	bridged := c.bridge != nil
	c.mu.Unlock()
	if bridged {
		m, err := c.bridged(msg)
		if m == nil || err != nil {
			return err
		}
		msg = m
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	var call jsonrpc.ID
	startListening := false
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case req.Method == "initialize" && req.IsCall():
			c.initID = req.ID.Raw()
		case req.Method == "notifications/initialized" && !c.listening && c.bridge == nil:
			c.listening, startListening = true, true
		}
		c.mu.Unlock()
		if req.IsCall() {
			call = req.ID
		}
	}
	if call.IsValid() && c.initIDIsNot(call) {
		// A call's answer may take as long as the call: post it in the
		// background, so that the client's other messages (the answer to
		// a sampling request the call is waiting on) are not held up. It
		// waits its turn among the calls in flight.
		ok := c.spawn(func() {
			err := c.sessionCalls.Acquire(c.ctx, 1)
			if err == nil {
				defer c.sessionCalls.Release(1)
				if err = c.calls.Acquire(c.ctx, 1); err == nil {
					defer c.calls.Release(1)
					err = c.post(data, call, startListening)
				}
			}
			c.answerFailure(call, err)
		})
		if !ok {
			return mcp.ErrConnectionClosed
		}
		return nil
	}
	err = c.post(data, call, startListening)
	var se *statusError
	if errors.As(err, &se) && se.resp != nil {
		// The server answered the call with a JSON-RPC error: it is
		// the answer, not a failure of the connection.
		c.deliver(se.resp)
		return nil
	}
	return err
}

// answerFailure answers call with the failure to post it: the server's own
// JSON-RPC error when its HTTP error status carried one, else -32050.
func (c *streamConn) answerFailure(call jsonrpc.ID, err error) {
	if err == nil || c.ctx.Err() != nil {
		return
	}
	var se *statusError
	if errors.As(err, &se) && se.resp != nil {
		c.deliver(se.resp)
		return
	}
	c.deliver(errorResponse(call, CodeUpstream, "upstream: "+err.Error(), nil))
}

// statusError is an HTTP error status from the upstream. resp is the
// JSON-RPC error its body held for the call, as it came, when it held one.
type statusError struct {
	code int
	text string
	resp *jsonrpc.Response
}

func (e *statusError) Error() string {
	if e.resp != nil && e.resp.Error != nil {
		return fmt.Sprintf("HTTP %d: %v", e.code, e.resp.Error)
	}
	return fmt.Sprintf("HTTP %d: %s", e.code, e.text)
}

// maxErrorBody bounds what is read of an HTTP error answer.
const maxErrorBody = 1 << 20

// readStatusError reads an HTTP error answer: a JSON-RPC error for call
// (or for no id, which is then given call's) is kept whole.
func readStatusError(resp *http.Response, call jsonrpc.ID) *statusError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	se := &statusError{code: resp.StatusCode}
	if m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(body)); err == nil && call.IsValid() {
		if r, ok := m.(*jsonrpc.Response); ok && r.Error != nil && (r.ID == call || !r.ID.IsValid()) {
			r.ID = call
			se.resp = r
			return se
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 512 {
		text = text[:512] + "..."
	}
	se.text = text
	return se
}

// initIDIsNot reports whether id is not that of the initialize request,
// which is posted in line: every later request needs its session id.
func (c *streamConn) initIDIsNot(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initID != id.Raw()
}

// post sends one message and reads or starts reading its answer.
func (c *streamConn) post(data []byte, call jsonrpc.ID, startListening bool) error {
	hreq, err := c.newRequest(http.MethodPost, data)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(hreq)
	if err != nil {
		if c.ctx.Err() != nil {
			return mcp.ErrConnectionClosed
		}
		return err
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		if c.sessionID == "" {
			c.sessionID = sid
		}
		c.mu.Unlock()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		se := readStatusError(resp, call)
		if se.resp == nil && resp.StatusCode == http.StatusNotFound && c.SessionID() != "" {
			err := errors.New("the upstream server ended the session (HTTP 404)")
			c.fail(err)
			return err
		}
		return se
	}
	if startListening {
		// The stream is open before the next message goes: a server's
		// list_changed after the client's next request must find it.
		// Servers flush the stream's headers at once; one that does not
		// is waited for a few seconds only.
		opened := make(chan struct{})
		if c.spawn(func() { c.listen(opened) }) {
			t := time.NewTimer(listenWait)
			select {
			case <-opened:
			case <-t.C:
			case <-c.ctx.Done():
			}
			t.Stop()
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		resp.Body.Close()
	case ct == "text/event-stream":
		if !c.spawn(func() { c.readStream(resp.Body, call) }) {
			resp.Body.Close()
			return mcp.ErrConnectionClosed
		}
	default:
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxMessage+1))
		if err != nil {
			return err
		}
		if int64(len(body)) > c.maxMessage {
			return fmt.Errorf("an answer of more than %d bytes", c.maxMessage)
		}
		if len(bytes.TrimSpace(body)) == 0 {
			if call.IsValid() {
				return errors.New("the upstream server answered a request with an empty body")
			}
			return nil
		}
		seen := c.deliverBody(body, call)
		if call.IsValid() && !seen {
			return errors.New("the upstream server's answer did not answer the request")
		}
	}
	return nil
}

// deliverBody delivers the message or batch in body and reports whether
// one of them answers call.
func (c *streamConn) deliverBody(body []byte, call jsonrpc.ID) bool {
	seen := false
	one := func(raw []byte) {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return
		}
		if r, ok := m.(*jsonrpc.Response); ok {
			if call.IsValid() && r.ID == call {
				seen = true
			}
			if c.refusedInit(r) {
				c.mu.Lock()
				answer := c.bridge.answer
				c.mu.Unlock()
				c.deliver(&jsonrpc.Response{ID: r.ID, Result: answer})
				return
			}
			c.noteInitialize(r)
			c.mu.Lock()
			b := c.bridge
			c.mu.Unlock()
			if b != nil && b.legacy && r.Error == nil && c.takeInput(r.ID, r.Result) {
				return // answered once the client's input is in
			}
			if b != nil && b.legacy {
				c.settleInputCall(r.ID)
			}
			if b != nil && b.legacy && r.Error == nil {
				// A translated session: the answer as the client's
				// revision defines it.
				if res, rerr := legacyResult(r.Result); rerr != nil {
					r.Result, r.Error = nil, rerr
				} else {
					r.Result = res
				}
			}
		}
		if _, ok := m.(*jsonrpc.Request); ok && call.IsValid() {
			c.related.Store(m, call)
		}
		c.deliver(m)
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(b, &batch) == nil {
			for _, raw := range batch {
				one(raw)
			}
		}
		return seen
	}
	one(body)
	return seen
}

// relatedTo implements relater: the call on whose stream msg came.
func (c *streamConn) relatedTo(msg jsonrpc.Message) (jsonrpc.ID, bool) {
	v, ok := c.related.LoadAndDelete(msg)
	if !ok {
		return jsonrpc.ID{}, false
	}
	return v.(jsonrpc.ID), true
}

// noteInitialize keeps the negotiated protocol version, which every later
// request must carry in its header.
func (c *streamConn) noteInitialize(r *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initID == nil || r.ID.Raw() != c.initID {
		return
	}
	c.initID = nil
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(r.Result, &res) == nil {
		c.version = res.ProtocolVersion
	}
}

// readStream delivers the messages of one event stream. When the stream
// of a call ends before the call's answer, the upstream is asked for the
// rest with a GET carrying the last event id it gave (as the Streamable
// HTTP transport has a client do, and a server that closes a call's
// stream to be polled (SEP-1699) expects), a few times without progress
// at most; a stream without ids, or one that cannot be resumed, gets the
// call an error answer: the client must not wait for an answer that will
// never come.
func (c *streamConn) readStream(body io.ReadCloser, call jsonrpc.ID) {
	answered := false
	lastID := ""
	failures := 0
	for {
		end, err := readEventStream(body, c.maxMessage, func(data []byte) {
			answered = c.deliverBody(data, call) || answered
		})
		body.Close()
		if !call.IsValid() || answered || c.ctx.Err() != nil {
			return
		}
		if end.lastID != "" && end.lastID != lastID {
			lastID, failures = end.lastID, 0 // progress: the tries start again
		}
		why := "the upstream server ended the stream before answering"
		if err != nil {
			why += ": " + err.Error()
		}
		for body = nil; body == nil; {
			if lastID == "" || failures >= maxResumes {
				c.deliver(errorResponse(call, CodeUpstream, "upstream: "+why, nil))
				return
			}
			failures++
			body, err = c.resume(lastID, resumeDelay(end.retry, failures))
			if body != nil && c.resumed != nil {
				c.resumed()
			}
			if c.ctx.Err() != nil {
				if body != nil {
					body.Close()
				}
				return
			}
			if err != nil {
				why = "the upstream server ended the stream before answering; resuming it: " + err.Error()
				var se *statusError
				if errors.As(err, &se) && se.code/100 == 4 && se.code != http.StatusConflict && se.code != http.StatusTooManyRequests {
					// Refused: asking again changes nothing. (409 is
					// the Go SDK's "the stream is still held": the
					// server has not seen the cut yet.)
					failures = maxResumes
				}
			}
		}
	}
}

// maxResumes bounds the resumptions of a call's stream in a row that
// bring no new event.
const maxResumes = 5

// resumeDelay is the wait before the n-th resumption in a row (from 1):
// what the server asked for, else 250 ms growing by half each time (3.3
// seconds over the five), at most 5 seconds.
func resumeDelay(retry time.Duration, n int) time.Duration {
	if retry > 0 {
		return min(retry, time.Minute)
	}
	d := 250 * time.Millisecond
	for range n - 1 {
		d += d / 2
	}
	return min(d, 5*time.Second)
}

// resume asks the upstream, after delay, for the events of a stream
// after lastID: the body of its event stream, or why it gave none.
func (c *streamConn) resume(lastID string, delay time.Duration) (io.ReadCloser, error) {
	t := time.NewTimer(delay)
	select {
	case <-t.C:
	case <-c.ctx.Done():
		t.Stop()
		return nil, c.ctx.Err()
	}
	req, err := c.newRequest(http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		return nil, readStatusError(resp, jsonrpc.ID{})
	}
	return resp.Body, nil
}

// listenWait bounds the wait for the standalone stream's headers.
const listenWait = 5 * time.Second

// listen holds the standalone event stream open, for what the server sends
// outside any call, closing opened once the first answer to its GET came.
// A stream that breaks after a second is opened again, with the last
// event id the server gave, so that what it sent meanwhile is not lost.
// A server may refuse it (405): it then sends nothing outside calls.
func (c *streamConn) listen(opened chan struct{}) {
	once := sync.OnceFunc(func() { close(opened) })
	defer once()
	lastID := "" // a stream opened again takes up where it broke
	for attempt := 0; attempt < 3 && c.ctx.Err() == nil; attempt++ {
		req, err := c.newRequest(http.MethodGet, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := c.client.Do(req)
		once()
		if err != nil {
			return
		}
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode == http.StatusConflict && lastID != "" {
			// The server has not seen the break yet (the Go SDK's
			// "stream still held"): ask again shortly.
			resp.Body.Close()
			t := time.NewTimer(resumeDelay(0, attempt+1))
			select {
			case <-t.C:
			case <-c.ctx.Done():
				t.Stop()
			}
			continue
		}
		if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
			resp.Body.Close()
			return
		}
		start := time.Now()
		end, _ := readEventStream(resp.Body, c.maxMessage, func(data []byte) { c.deliverBody(data, jsonrpc.ID{}) })
		resp.Body.Close()
		if end.lastID != "" {
			lastID = end.lastID
		}
		if time.Since(start) < time.Second {
			return // a server that closes at once: do not hammer it
		}
	}
}

// Close implements mcp.Connection: it ends the upstream session (DELETE,
// bounded) and every request in flight.
func (c *streamConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sid := c.sessionID
	c.mu.Unlock()
	if sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := c.newRequest(http.MethodDelete, nil)
		if err == nil {
			if resp, err := c.client.Do(req.WithContext(ctx)); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.cancel()
	c.fail(mcp.ErrConnectionClosed)
	c.wg.Wait()
	return nil
}

// readEvents calls fn with the data of each server-sent event of type
// "message" (or untyped) read from r, until r ends.
func readEvents(r io.Reader, maxData int64, fn func(data []byte)) error {
	_, err := readEventStream(r, maxData, fn)
	return err
}

// streamEnd is what a client needs to resume an event stream: the last
// event id the server gave (the SSE "last event ID buffer": an id stands
// until another replaces it), and the delay it asked for before a
// reconnection ("retry"), or 0.
type streamEnd struct {
	lastID string
	retry  time.Duration
}

// readEventStream is readEvents that also returns how to resume.
func readEventStream(r io.Reader, maxData int64, fn func(data []byte)) (streamEnd, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var end streamEnd
	var data []byte
	event := ""
	hasData := false
	for {
		line, err := readLine(br, maxData)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return end, nil
			}
			return end, err
		}
		if len(line) == 0 { // end of event
			if hasData && (event == "" || event == "message") {
				fn(data)
			}
			data, event, hasData = data[:0], "", false
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if int64(len(data)) > maxData {
				return end, fmt.Errorf("an event of more than %d bytes", maxData)
			}
		case "event":
			event = string(value)
		case "id":
			if !bytes.ContainsRune(value, 0) { // as the SSE specification has it
				end.lastID = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				end.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// readLine reads one line without its end (LF, CRLF or CR before LF),
// bounded by max bytes.
func readLine(br *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if int64(len(line)) > max+2 {
			return nil, fmt.Errorf("an event line of more than %d bytes", max)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return bytes.TrimRight(line, "\r\n"), nil
			}
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}
