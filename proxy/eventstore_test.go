package proxy

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEventStore: the events kept for resuming are bounded in bytes (the
// oldest go first, over every session) and in age, and a replay from an
// index whose next event was dropped fails rather than skip it.
func TestEventStore(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	s := newEventStore(10, time.Minute)
	s.now = func() time.Time { return now }
	after := func(session, stream string, index int) (string, error) {
		var out string
		for d, err := range s.After(ctx, session, stream, index) {
			if err != nil {
				return out, err
			}
			out += string(d) + ","
		}
		return out, nil
	}
	s.Open(ctx, "a", "1")
	for _, d := range []string{"a0", "a1", "a2"} {
		s.Append(ctx, "a", "1", []byte(d))
	}
	s.Append(ctx, "b", "", []byte("b0"))
	cases := []struct {
		name          string
		step          func()
		session, strm string
		index         int
		want          string
		purged        bool
	}{
		{"all kept", func() {}, "a", "1", -1, "a0,a1,a2,", false},
		{"from the middle", func() {}, "a", "1", 0, "a1,a2,", false},
		{"over the bytes: the oldest go", func() { s.Append(ctx, "b", "", []byte("b1xx")) }, "a", "1", -1, "", true},
		{"what is left", func() {}, "a", "1", 0, "a1,a2,", false},
		{"the other session", func() {}, "b", "", -1, "b0,b1xx,", false},
		{"too old", func() { now = now.Add(2 * time.Minute) }, "b", "", 0, "", true},
		{"closed session", func() { s.SessionClosed(ctx, "a") }, "a", "1", 1, "", false},
	}
	for _, c := range cases {
		c.step()
		got, err := after(c.session, c.strm, c.index)
		switch {
		case c.purged && !errors.Is(err, mcp.ErrEventsPurged):
			t.Errorf("%s: %q, %v; want ErrEventsPurged", c.name, got, err)
		case !c.purged && c.name == "closed session" && err == nil:
			t.Errorf("%s: %q, want an error", c.name, got)
		case !c.purged && c.name != "closed session" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if s.bytes != 0 || len(s.order) != 0 {
		t.Errorf("%d bytes, %d events held after every event expired or its session closed", s.bytes, len(s.order))
	}
}

// TestEventStoreForgetStream: a forgotten stream's events stop counting
// against the bytes at once, its places are dropped without counting
// twice, and the refs of many forgotten streams do not pile up.
func TestEventStoreForgetStream(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	s := newEventStore(1<<20, time.Minute)
	s.now = func() time.Time { return now }
	s.Append(ctx, "keep", "", []byte("k0"))
	for i := range 200 {
		id := fmt.Sprint("call", i)
		s.Append(ctx, id, "", []byte("abc"))
		s.Append(ctx, id, "", []byte("de"))
		s.forgetStream(id, "")
	}
	if s.bytes != 2 {
		t.Errorf("%d bytes held, want 2 (the kept stream's)", s.bytes)
	}
	if len(s.order) > 2*(s.dead+1) || len(s.order) > 130 {
		t.Errorf("%d refs held for 1 live event (%d dead): the dead pile up", len(s.order), s.dead)
	}
	for _, err := range s.After(ctx, "call3", "", -1) {
		if err == nil {
			t.Error("a forgotten stream replayed")
		}
	}
	s.Append(ctx, "keep", "", []byte("k1"))
	now = now.Add(2 * time.Minute)
	s.Append(ctx, "keep", "", []byte("k2"))
	if s.bytes != 2 || len(s.order) != 1 || s.dead != 0 {
		t.Errorf("after expiry: %d bytes, %d refs, %d dead; want 2, 1, 0", s.bytes, len(s.order), s.dead)
	}
	var got []string
	for d, err := range s.After(ctx, "keep", "", 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(d))
	}
	if fmt.Sprint(got) != "[k2]" {
		t.Errorf("kept stream after expiry: %v", got)
	}
}
