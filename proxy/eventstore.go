package proxy

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eventStore keeps the events the HTTP downstream sent on its streams, so
// that a client cut off mid-stream gets what it missed by reconnecting
// with Last-Event-ID (the SDK's transport numbers the events and replays
// them from here). It is bounded in bytes over every session and in
// time: the oldest events go first when the bytes are spent, and an event
// older than maxAge goes on the next append or replay. The SDK's
// MemoryEventStore has the byte bound but no time bound, and can only
// forget a whole session, which would renumber a live stream's events.
type eventStore struct {
	maxBytes int
	maxAge   time.Duration
	now      func() time.Time

	mu    sync.Mutex
	bytes int
	order []storedRef // every event held, oldest first
	// dead counts the refs of order whose stream was forgotten (see
	// forgetStream): their bytes are no longer counted, and they are
	// dropped as they come first, or all at once when they are many.
	dead   int
	stream map[streamKey]*storedStream
}

type streamKey struct{ session, stream string }

// storedStream is one stream's events: first is the index of data[0].
type storedStream struct {
	first int
	data  [][]byte
}

// storedRef places an event of order in its stream.
type storedRef struct {
	key  streamKey
	size int
	at   time.Time
}

func newEventStore(maxBytes int, maxAge time.Duration) *eventStore {
	return &eventStore{maxBytes: maxBytes, maxAge: maxAge, now: time.Now, stream: map[streamKey]*storedStream{}}
}

var _ mcp.EventStore = (*eventStore)(nil)

// Open implements mcp.EventStore.
func (s *eventStore) Open(_ context.Context, session, stream string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := streamKey{session, stream}
	if s.stream[k] == nil {
		s.stream[k] = &storedStream{}
	}
	return nil
}

// Append implements mcp.EventStore.
func (s *eventStore) Append(_ context.Context, session, stream string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := streamKey{session, stream}
	st := s.stream[k]
	if st == nil {
		st = &storedStream{}
		s.stream[k] = st
	}
	// A copy: the store must not hold on to a buffer of the caller's.
	st.data = append(st.data, slices.Clone(data))
	s.order = append(s.order, storedRef{key: k, size: len(data), at: s.now()})
	s.bytes += len(data)
	s.expire()
	return nil
}

// expire drops the oldest events while the bytes are over the bound (but
// never the one just appended) or they are older than maxAge. Requires
// s.mu.
func (s *eventStore) expire() {
	cutoff := s.now().Add(-s.maxAge)
	for len(s.order) > 0 {
		ref := s.order[0]
		over := s.bytes > s.maxBytes && len(s.order) > 1
		if !over && !ref.at.Before(cutoff) {
			break
		}
		s.order[0] = storedRef{}
		s.order = s.order[1:]
		st := s.stream[ref.key]
		if st == nil || len(st.data) == 0 {
			s.dead-- // its bytes went with its stream
			continue
		}
		s.bytes -= ref.size
		st.data[0] = nil
		st.data = st.data[1:]
		st.first++
	}
}

// forgetStream drops one stream's events at once, in time independent of
// the events held: a stream of a call without a session (see
// callstream.go) is forgotten when its call is done with, as a session's
// streams are when it closes. Its places in order go lazily: first
// whenever they come first, and all together once they are half of
// order, so that they cost no more than the events did.
func (s *eventStore) forgetStream(session, stream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := streamKey{session, stream}
	st := s.stream[k]
	if st == nil {
		return
	}
	delete(s.stream, k)
	for _, d := range st.data {
		s.bytes -= len(d)
	}
	s.dead += len(st.data)
	for len(s.order) > 0 && s.stream[s.order[0].key] == nil {
		s.order[0] = storedRef{}
		s.order = s.order[1:]
		s.dead--
	}
	if s.dead > 64 && s.dead > len(s.order)/2 {
		s.order = slices.DeleteFunc(s.order, func(r storedRef) bool { return s.stream[r.key] == nil })
		s.dead = 0
	}
}

// After implements mcp.EventStore: the events after index, or
// mcp.ErrEventsPurged when one of them is no longer held.
func (s *eventStore) After(_ context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	s.expire()
	var out [][]byte
	var err error
	st := s.stream[streamKey{session, stream}]
	switch {
	case st == nil:
		err = fmt.Errorf("no stream %q of session %q is held", stream, session)
	case index+1 < st.first:
		err = fmt.Errorf("events after %d of stream %q: %w", index, stream, mcp.ErrEventsPurged)
	case index+1-st.first < len(st.data):
		out = slices.Clone(st.data[index+1-st.first:])
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range out {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements mcp.EventStore: the session's events go.
func (s *eventStore) SessionClosed(_ context.Context, session string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order = slices.DeleteFunc(s.order, func(r storedRef) bool {
		if r.key.session != session {
			return false
		}
		if s.stream[r.key] == nil {
			s.dead-- // of a forgotten stream: its bytes went with it
		} else {
			s.bytes -= r.size
		}
		return true
	})
	for k := range s.stream {
		if k.session == session {
			delete(s.stream, k)
		}
	}
	return nil
}
