package pipeline

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// memoLines are records whose tools repeat, differ by a byte, or move
// their schema: the cases where remembering could give a wrong result.
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
	// A tool of "tool", whose text is remembered at another depth.
	`{"server_id":"i","tool":{"name":"noop"}}`,
}

// TestToolMemoSameRows holds a worker whose decoder remembers tools to the
// rows and counts of one whose decoder does not, over repeated and nearly
// repeated tools, with and without the sensitivity variants; and checks
// that the worker computed each remembered text once.
func TestToolMemoSameRows(t *testing.T) {
	for _, noSens := range []bool{false, true} {
		t.Run(fmt.Sprint("noSens=", noSens), func(t *testing.T) {
			pool := newRowsPool(2)
			s := newDecodeStage("x.jsonl", false, noSens, 2, pool, newNameSeeds())
			memo, plain := s.workers[0], s.workers[1]
			plain.dec = census.NewDecoder()
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
			// Remembered texts: run (required command), run (required
			// apiKey), fetchUrl, noop, noop with input_schema, and noop
			// as "tool". A flat record is not remembered: its text holds
			// its server id.
			if got := memo.results.Len(); got != 6 {
				t.Errorf("the worker kept the results of %d tool texts, want 6", got)
			}
			if got := plain.results.Len(); got != 0 {
				t.Errorf("the worker whose decoder does not remember kept %d results", got)
			}
		})
	}
}
