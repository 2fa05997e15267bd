package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// bodyStep is the first room taken for a body of unknown length, and the
// size of a pooled buffer: a single tool is a few kilobytes.
const bodyStep = 64 << 10

// pooledBufMax is the largest buffer the pools keep: a burst of batches
// must not leave megabytes pinned per processor once it is over.
const pooledBufMax = 1 << 20

// admit waits until n more request bytes fit under MaxInFlight and returns
// the function that releases them. A request that has to wait calls the
// test hook first, so that a test can see it waiting without sleeping.
func (s *Server) admit(ctx context.Context, n int64) (func(), error) {
	if err := s.admitWithin(ctx, n, 0); err != nil {
		return nil, err
	}
	return func() { s.inFlight.Release(max(n, 1)) }, nil
}

// admitWithin takes n bytes among those in flight, waiting up to wait for
// them (no bound when 0). The timer is only made for a request that has
// to wait: most never do.
func (s *Server) admitWithin(ctx context.Context, n int64, wait time.Duration) error {
	n = max(n, 1)
	if s.inFlight.TryAcquire(n) {
		return nil
	}
	if s.testHookWaiting != nil {
		s.testHookWaiting()
	}
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	if err := s.inFlight.Acquire(ctx, n); err != nil {
		if ctx.Err() == context.Canceled || context.Cause(ctx) == context.Canceled {
			return errClientGone
		}
		return busy(err)
	}
	return nil
}

// httpError is a failure that is answered with its status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// heldBody is a request body read into a pooled buffer, with the bytes it
// holds among those in flight.
type heldBody struct {
	s     *Server
	buf   *[]byte
	whole []byte // the pooled buffer before it was cut to the body's room
	held  int64
	large bool // counted in Server.large
}

// release gives back the bytes in flight and the buffer.
func (h *heldBody) release() {
	if h.held > 0 {
		h.s.inFlight.Release(h.held)
		h.held = 0
	}
	if h.buf != nil {
		if h.whole != nil && cap(*h.buf) > 0 && &(*h.buf)[:1][0] == &h.whole[:1][0] {
			*h.buf = h.whole // not grown: the pool gets its buffer back whole
		}
		h.s.putBuf(h.buf)
		h.buf = nil
	}
	if h.large {
		h.large = false
		h.s.largeDone()
	}
}

// grow makes room for more of the body: the buffer's capacity doubles, up
// to bound, and capacity not yet admitted among the bytes in flight is
// admitted before it is allocated, so what a request holds is counted
// before it is read, whether or not the client ever sends the rest.
func (h *heldBody) grow(ctx context.Context, bound, first int64) error {
	b := *h.buf
	want := min(max(2*int64(cap(b)), bodyStep, first), bound)
	if int64(cap(b)) >= want {
		return nil
	}
	if want > h.held {
		if err := h.s.admitWithin(ctx, want-h.held, h.s.cfg.ReadTimeout); err != nil {
			return err
		}
		h.held = want
	}
	if want >= reclaimAbove && !h.large {
		h.large = true
		h.s.large.Add(1)
	}
	if int64(cap(b)) < want {
		nb := make([]byte, len(b), want)
		copy(nb, b)
		*h.buf = nb
	}
	return nil
}

// readBody reads r's body into a pooled buffer, at most MaxBody bytes,
// taking its room among the bytes in flight as it grows. The caller
// releases the returned heldBody once it no longer needs the bytes. A body
// announced or found to be larger than MaxBody is refused with 413 and not
// kept; one that cannot get room within ReadTimeout is refused with 503.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *heldBody, error) {
	limit := s.cfg.MaxBody
	if r.ContentLength > limit {
		return nil, nil, &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit)}
	}
	// The room a body may take: its announced length (+1 to see EOF
	// without growing), else the limit (+1 to see that it is passed); never
	// more than the whole budget, which could never be granted.
	bound := limit + 1
	if r.ContentLength >= 0 {
		bound = r.ContentLength + 1
	}
	bound = min(bound, s.cfg.MaxInFlight)
	h := &heldBody{s: s, buf: s.bufs.Get().(*[]byte)}
	if int64(cap(*h.buf)) > bound {
		h.whole = *h.buf
		*h.buf = (*h.buf)[:0:bound] // the pooled buffer's spare room is not this request's
	}
	// Waiting for room is bounded as reading the body is: a request that
	// gets none in that time is told to come back.
	ctx := r.Context()
	// An announced body takes its room whole, at once: no request then
	// holds part of its room while it waits for the rest, which could
	// leave every request waiting on the others. Only a body of unknown
	// length grows its room as it arrives.
	room := max(int64(cap(*h.buf)), 1)
	if r.ContentLength >= 0 {
		room = bound
	}
	if err := h.admitRoom(ctx, room); err != nil {
		h.release()
		return nil, nil, err
	}
	// An announced body gets room for all of it at once, but not more
	// than a megabyte before the bytes arrive: a client must not make the
	// server allocate for a body it does not send.
	first := int64(0)
	if r.ContentLength > 0 {
		first = min(r.ContentLength+1, 1<<20)
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	for {
		b := *h.buf
		if len(b) == cap(b) || int64(cap(b)) < first {
			if err := h.grow(ctx, bound, first); err != nil {
				h.release()
				return nil, nil, err
			}
			b = *h.buf
		}
		var n int
		var err error
		if len(b) < cap(b) {
			n, err = body.Read(b[len(b):cap(b)])
			*h.buf = b[:len(b)+n]
		} else {
			// The body fills the whole budget: one more byte would pass
			// MaxInFlight, which is never below MaxBody.
			var one [1]byte
			if n, err = body.Read(one[:]); n > 0 {
				err = &http.MaxBytesError{Limit: limit}
			}
		}
		if err == io.EOF {
			return *h.buf, h, nil
		}
		if err != nil {
			h.release()
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				return nil, nil, &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds the limit of %d bytes", mbe.Limit)}
			case errors.Is(err, os.ErrDeadlineExceeded):
				return nil, nil, &httpError{http.StatusRequestTimeout, "request body not received in time"}
			}
			return nil, nil, &httpError{http.StatusBadRequest, fmt.Sprintf("reading the request body: %v", err)}
		}
	}
}

// admitRoom admits the first n bytes of room for the body.
func (h *heldBody) admitRoom(ctx context.Context, n int64) error {
	if err := h.s.admitWithin(ctx, n, h.s.cfg.ReadTimeout); err != nil {
		return err
	}
	h.held = n
	return nil
}

// errClientGone is the failure of a request whose client went away while
// it waited for room: there is no one to answer.
var errClientGone = errors.New("the client went away")

// busy is the failure to get room for a body: err is the context's.
func busy(err error) error {
	return &httpError{http.StatusServiceUnavailable, fmt.Sprintf("no room for the request body among the bytes in flight: %v; retry later", err)}
}

// fail answers err (an *httpError, else 500) and, when the request body
// was not read to its end, lingers over the rest of it.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := http.StatusInternalServerError, err.Error()
	var he *httpError
	if errors.As(err, &he) {
		code = he.code
	}
	if errors.Is(err, errClientGone) {
		return
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, code, apiError{Error: msg})
	if code != http.StatusRequestTimeout { // a client too slow to send its body is not waited for again
		s.linger(w, r)
	}
}

// linger reads and discards what is left of the request body after an
// answer that did not read it all, bounded by LingerBytes and
// LingerTimeout, then lets the connection close. A client that writes its
// whole body before reading finds the answer instead of a reset: closing a
// socket with unread bytes makes the kernel send RST, which discards the
// answer at the client's end. The answer is flushed first, so that a
// client reading as it writes sees it at once and can stop sending.
func (s *Server) linger(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	if r.ContentLength > s.cfg.LingerBytes {
		return // announced too large to take in: the client will see the reset either way
	}
	rc := http.NewResponseController(w)
	// Never drain without a bound in time: where the deadline cannot be
	// set, the rest is not read at all.
	if rc.SetReadDeadline(time.Now().Add(s.cfg.LingerTimeout)) != nil || rc.Flush() != nil {
		return
	}
	io.CopyN(io.Discard, r.Body, s.cfg.LingerBytes)
}

// admittedBody reads r's body for a handler, answering the failures
// itself: ok is false when the request has been answered already. done
// releases the body's buffer and bytes in flight.
func (s *Server) admittedBody(w http.ResponseWriter, r *http.Request) (body []byte, done func(), ok bool) {
	body, h, err := s.readBody(w, r)
	if err != nil {
		s.fail(w, r, err)
		return nil, nil, false
	}
	return body, h.release, true
}

// bodyFirst reads an MCP request's body, bounded as /v1/classify's is, and
// admits it before the MCP handler decodes it.
func (s *Server) bodyFirst(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, done, ok := s.admittedBody(w, r)
		if !ok {
			return
		}
		defer done()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}

// putBuf returns a buffer to the pool unless a large request grew it.
func (s *Server) putBuf(bp *[]byte) {
	if cap(*bp) > pooledBufMax {
		return
	}
	*bp = (*bp)[:0]
	s.bufs.Put(bp)
}
