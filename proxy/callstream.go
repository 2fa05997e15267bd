package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A request of revision 2026-07-28 has no session, yet its answer may be
// an event stream: the call's progress and log notifications, then its
// answer. So that a client cut off mid-call can resume it as a session's
// client can, the proxy numbers those events and keeps them in the event
// store (the sessions' one, under the same bounds) in a stream of the
// call's own, named by a random id that only the client it was sent to
// knows. The client reconnects with a GET carrying Last-Event-ID and no
// session, and gets what it missed, then the rest.
//
// The call upstream outlives the client's request for that: it runs on in
// a goroutine of its own, and is held for ResumeWait after its last reader
// went away; when none came back by then, it is cancelled (the upstream
// sees its request end, as on a direct connection, where a 2026 client's
// cut is the call's cancellation). The SDKs' servers keep no events for
// this revision (SEP-2575); these are the proxy's own.

// callStreams holds the event streams of calls without a session.
type callStreams struct {
	events  *eventStore
	wait    time.Duration
	metrics *metrics
	// ctx is cancelled by close: every call's context derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	m      map[string]*callStream
	closed bool
	wg     sync.WaitGroup // the producers
}

// callStream is one call's stream.
type callStream struct {
	cs     *callStreams
	id     string
	cancel context.CancelFunc // ends the call upstream

	mu      sync.Mutex
	n       int  // events appended
	ended   bool // no event will follow
	gone    bool // forgotten: no reader attaches, no event is kept
	readers int
	// changed is closed, and renewed, on every append and at the end.
	changed chan struct{}
	timer   *time.Timer
}

func newCallStreams(events *eventStore, wait time.Duration, m *metrics) *callStreams {
	ctx, cancel := context.WithCancel(context.Background())
	return &callStreams{events: events, wait: wait, metrics: m, ctx: ctx, cancel: cancel, m: map[string]*callStream{}}
}

// callContext returns the context of a call whose answer may become a
// stream: it keeps r's values but not its end. It ends with cancel, with
// close, and with r until keep is called; keep reports false when r had
// already ended (the client is gone: there is no one to stream to).
func (cs *callStreams) callContext(r *http.Request) (ctx context.Context, cancel context.CancelFunc, keep func() bool) {
	ctx, cancelCtx := context.WithCancel(context.WithoutCancel(r.Context()))
	stopClose := context.AfterFunc(cs.ctx, cancelCtx)
	keep = context.AfterFunc(r.Context(), cancelCtx)
	return ctx, func() {
		stopClose()
		keep()
		cancelCtx()
	}, keep
}

// serve answers r with a stream of the call's own. produce runs in a
// goroutine of its own, emitting each event's data (one JSON-RPC message),
// until the call ends; then done is called. cancel ends the call's
// context (see callContext), once no reader is left to want it.
func (cs *callStreams) serve(w http.ResponseWriter, r *http.Request, cancel context.CancelFunc, produce func(emit func([]byte)), done func()) {
	s := &callStream{cs: cs, id: rand.Text(), cancel: cancel, readers: 1, changed: make(chan struct{})}
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		// The call is cancelled, and produce, finding its context
		// ended, lets go of what it holds (an upstream answer's body).
		cancel()
		produce(func([]byte) {})
		done()
		http.Error(w, errShuttingDown.Error(), http.StatusServiceUnavailable)
		return
	}
	cs.m[s.id] = s
	cs.wg.Add(1)
	cs.mu.Unlock()
	go func() {
		defer cs.wg.Done()
		defer done()
		defer s.end()
		defer cancel() // the call is over: what its context holds goes
		produce(s.append)
	}()
	s.serveFrom(w, r.Context(), 0, true)
}

// resume serves a GET with Last-Event-ID and no session: the stream the
// id names, from the event after it.
func (cs *callStreams) resume(w http.ResponseWriter, r *http.Request) {
	eid := r.Header.Get("Last-Event-ID")
	id, n, err := parseCallEventID(eid)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cs.mu.Lock()
	s := cs.m[id]
	cs.mu.Unlock()
	if s == nil || !s.attach() {
		http.Error(w, "no event stream "+strconv.Quote(eid)+" is held: it ended or was kept no longer; send the request again", http.StatusNotFound)
		return
	}
	cs.metrics.resumed.WithLabelValues("client").Inc()
	s.serveFrom(w, r.Context(), n, false)
}

// parseCallEventID splits an event id of a call's stream, "ID_N" where N
// is how many of its events the client has.
func parseCallEventID(eid string) (string, int, error) {
	id, num, ok := strings.Cut(eid, "_")
	n, err := strconv.Atoi(num)
	if !ok || id == "" || err != nil || n < 0 {
		return "", 0, errors.New("malformed Last-Event-ID " + strconv.Quote(eid))
	}
	return id, n, nil
}

// close cancels every call, forgets every stream (its readers end), and
// waits for the producers.
func (cs *callStreams) close() {
	cs.mu.Lock()
	cs.closed = true
	all := slices.Collect(maps.Values(cs.m))
	cs.mu.Unlock()
	cs.cancel()
	for _, s := range all {
		s.forget(false)
	}
	cs.wg.Wait()
}

// append keeps one event and wakes the readers.
func (s *callStream) append(data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone || s.ended {
		return
	}
	s.cs.events.Append(context.Background(), s.id, "", data)
	s.n++
	close(s.changed)
	s.changed = make(chan struct{})
}

// end says no event follows.
func (s *callStream) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended = true
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// attach counts a reader, unless the stream is forgotten.
func (s *callStream) attach() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return false
	}
	s.readers++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	return true
}

// detach counts a reader out. Once no reader is left, the stream waits
// ResumeWait for one to come back, even when the last one wrote it whole:
// a write that succeeded may still not have reached the client.
func (s *callStream) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readers--
	if s.readers == 0 && !s.gone {
		s.timer = time.AfterFunc(s.cs.wait, s.expire)
	}
}

// expire forgets the stream if no reader came back.
func (s *callStream) expire() { s.forget(true) }

// forget cancels the call (a no-op once it ended) and drops its events;
// when idleOnly, only if no reader is attached.
func (s *callStream) forget(idleOnly bool) {
	s.mu.Lock()
	if s.gone || (idleOnly && s.readers > 0) {
		s.mu.Unlock()
		return
	}
	s.gone = true
	if idleOnly && !s.ended {
		s.cs.metrics.abandoned.Inc() // no client came back for it
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	close(s.changed)
	s.changed = make(chan struct{})
	// Under s.mu: no append can come between (see append).
	s.cs.events.forgetStream(s.id, "")
	s.mu.Unlock()
	s.cancel()
	s.cs.mu.Lock()
	delete(s.cs.m, s.id)
	s.cs.mu.Unlock()
}

// serveFrom writes the stream's events after the first n, and those that
// follow, until the end or until ctx ends (the client went away). The
// reader is attached; serveFrom detaches it. A stream whose events after
// n are no longer held is refused (400, as the SDK's transport refuses
// it) when nothing was written yet, and ended otherwise.
func (s *callStream) serveFrom(w http.ResponseWriter, ctx context.Context, n int, fresh bool) {
	defer s.detach()
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	started := false
	for {
		s.mu.Lock()
		have, ended, gone, changed := s.n, s.ended, s.gone, s.changed
		s.mu.Unlock()
		var events [][]byte
		if n < have && !gone {
			for data, err := range s.cs.events.After(ctx, s.id, "", n-1) {
				if err != nil {
					if !started {
						http.Error(w, "failed to replay events: "+err.Error(), http.StatusBadRequest)
					}
					return
				}
				events = append(events, data)
			}
		}
		if !started {
			if n > have {
				http.Error(w, "Last-Event-ID names an event not sent yet", http.StatusBadRequest)
				return
			}
			if gone && !fresh {
				http.Error(w, "the event stream is no longer held; send the request again", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache, no-transform")
			w.WriteHeader(http.StatusOK)
			started = true
			if fresh {
				// A first event with an id and no data (SEP-1699): a
				// client cut off before any message can resume too.
				if _, err := io.WriteString(w, "id: "+s.eventID(0)+"\ndata: \n\n"); err != nil {
					return
				}
			}
		}
		for _, data := range events {
			n++
			if writeEventID(w, s.eventID(n), data) != nil {
				return
			}
		}
		flush()
		if len(events) > 0 {
			continue
		}
		if gone {
			return
		}
		if ended && n >= have {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// eventID names the n-th event of the stream (from 1; 0 is before the
// first).
func (s *callStream) eventID(n int) string { return s.id + "_" + strconv.Itoa(n) }

// writeEventID writes one event of data with its id, a data line per line
// of data.
func writeEventID(w io.Writer, id string, data []byte) error {
	var b bytes.Buffer
	b.WriteString("id: ")
	b.WriteString(id)
	b.WriteString("\nevent: message\n")
	for line := range bytes.Lines(data) {
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte("\n")))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
