package pipeline

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// memoLines are records whose tools repeat, differ by a byte, or move
// their schema: the cases where a memo could give a wrong result.
var memoLines = []string{
	`{"server_id":"a","tools":[{"name":"run","description":"Run a shell command","inputSchema":{"type":"object","properties":{"command":{"type":"string","description":"shell command"},"apiKey":{"type":"string"}},"required":["command"]}}]}`,
	// The same tool on another server: a hit.
	`{"server_id":"b","tools":[{"name":"run","description":"Run a shell command","inputSchema":{"type":"object","properties":{"command":{"type":"string","description":"shell command"},"apiKey":{"type":"string"}},"required":["command"]}}]}`,
	// One byte differs, same length: not required.
	`{"server_id":"c","tools":[{"name":"run","description":"Run a shell command","inputSchema":{"type":"object","properties":{"command":{"type":"string","description":"shell command"},"apiKey":{"type":"string"}},"required":["apiKey"]}}]}`,
	// The same tool twice in one record, then a flat record of it.
	`{"server_id":"d","tools":[{"name":"fetchUrl","inputSchema":{"properties":{"targetUrl":{"type":"string"}}}},{"name":"fetchUrl","inputSchema":{"properties":{"targetUrl":{"type":"string"}}}}]}`,
	`{"server_id":"e","name":"fetchUrl","inputSchema":{"properties":{"targetUrl":{"type":"string"}}}}`,
	// No schema, then a schema under another key.
	`{"server_id":"f","tools":[{"name":"noop"},{"name":"noop"}]}`,
	`{"server_id":"g","tools":[{"name":"noop","input_schema":{"properties":{"password":{"type":"string"}}}}]}`,
	`{"server_id":"h","tools":[{"name":"run","description":"Run a shell command","inputSchema":{"type":"object","properties":{"command":{"type":"string","description":"shell command"},"apiKey":{"type":"string"}},"required":["command"]}}]}`,
}

// TestToolMemoSameRows holds a worker that remembers tools to the rows and
// counts of one that never does, over repeated and nearly repeated tools,
// with and without the sensitivity variants; and checks that the memo was
// used (it holds each distinct text once).
func TestToolMemoSameRows(t *testing.T) {
	for _, noSens := range []bool{false, true} {
		t.Run(fmt.Sprint("noSens=", noSens), func(t *testing.T) {
			pool := &rowsPool{}
			s := newDecodeStage("x.jsonl", false, noSens, 2, pool)
			memo, plain := s.workers[0], s.workers[1]
			plain.memo.rest = 1 << 60 // never remembers
			memo.rows, plain.rows = pool.get(), pool.get()
			for rounds := range 3 {
				for i, l := range memoLines {
					line := int64(rounds*len(memoLines) + i + 1)
					for _, ws := range []*decodeWorker{memo, plain} {
						if err := s.record(ws, line, []byte(l)); err != nil {
							t.Fatalf("line %d: %v", line, err)
						}
					}
				}
			}
			if !reflect.DeepEqual(memo.rows.tools, plain.rows.tools) {
				t.Errorf("tools rows differ:\nmemo  %+v\nplain %+v", memo.rows.tools, plain.rows.tools)
			}
			if !reflect.DeepEqual(memo.rows.props, plain.rows.props) {
				t.Errorf("properties rows differ:\nmemo  %+v\nplain %+v", memo.rows.props, plain.rows.props)
			}
			if !reflect.DeepEqual(memo.counters, plain.counters) || memo.sensCounts != plain.sensCounts {
				t.Errorf("counts differ:\nmemo  %+v %+v\nplain %+v %+v", memo.counters, memo.sensCounts, plain.counters, plain.sensCounts)
			}
			// Distinct tool texts: run (required command), run (required
			// apiKey), fetchUrl, the flat fetchUrl record, noop, noop
			// with input_schema.
			if got := len(memo.memo.entries); got != 6 {
				t.Errorf("memo holds %d tools, want 6", got)
			}
			if len(plain.memo.entries) != 0 {
				t.Errorf("resting memo holds %d tools", len(plain.memo.entries))
			}
		})
	}
}

// TestToolMemoRests checks that a memo of distinct tools rests after a
// window of few hits, for a rest that doubles with each such window, and
// remembers again after it.
func TestToolMemoRests(t *testing.T) {
	var m toolMemo
	dec := census.NewDecoder()
	var rests []int
	i := 0
	step := func() {
		t.Helper()
		rec, err := dec.Decode([]byte(fmt.Sprintf(`{"server_id":"s","tools":[{"name":"t%d"}]}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		tl := &rec.Tools[0]
		wasResting := m.rest > 0
		res, _, key, remember := m.lookup(tl)
		if res != nil {
			t.Fatalf("tool %d: a hit on distinct tools", i)
		}
		if remember {
			m.add(tl, key, toolResult{}, nil)
		}
		if !wasResting && m.rest > 0 {
			rests = append(rests, m.rest)
			if len(m.entries) != 0 {
				t.Errorf("tool %d: a resting memo holds %d tools", i, len(m.entries))
			}
		}
		i++
	}
	for (len(rests) < 2 || m.rest > 0) && i < 1<<20 {
		step()
	}
	if want := []int{memoRest, 2 * memoRest}; !reflect.DeepEqual(rests, want) {
		t.Errorf("rests %v, want %v", rests, want)
	}
	for range 10 {
		step()
	}
	if len(m.entries) != 10 {
		t.Errorf("after its rests the memo holds %d of 10 tools", len(m.entries))
	}
}
