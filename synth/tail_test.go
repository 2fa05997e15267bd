package synth

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestHeavyTail checks the shape of a heavy-tailed census (the largest
// server carries exactly MaxServerTools tools, the next ones a falling
// share, the totals hold) and that its ground truth still equals what the
// Python reference counts in the written file.
func TestHeavyTail(t *testing.T) {
	py := testenv.Python3(t)
	for _, shape := range []string{ShapeServers, ShapeTools} {
		t.Run(shape, func(t *testing.T) {
			opt := Options{Tools: 12000, Servers: 600, Seed: 11, Shape: shape, MaxServerTools: 3000}
			dir := writeTo(t, opt)
			perServer := map[string]int{}
			for _, line := range splitLines(t, readGzip(t, filepath.Join(dir, release.ServersFile)), release.ServersFile) {
				var rec struct {
					ServerID  json.RawMessage `json:"server_id"`
					ToolCount int             `json:"tool_count"`
				}
				if err := json.Unmarshal(line, &rec); err != nil {
					t.Fatal(err)
				}
				perServer[string(bytes.Trim(rec.ServerID, `"`))] = rec.ToolCount
			}
			var counts []int
			sum := 0
			for _, n := range perServer {
				counts = append(counts, n)
				sum += n
			}
			sort.Sort(sort.Reverse(sort.IntSlice(counts)))
			if len(counts) != opt.Servers || sum != opt.Tools {
				t.Fatalf("%d servers, %d tools; want %d, %d", len(counts), sum, opt.Servers, opt.Tools)
			}
			// 3000·k^-1.8: 3000, 862, 415, 247, ...
			if counts[0] != 3000 || counts[1] != 862 || counts[2] != 415 || counts[3] < counts[4] {
				t.Errorf("largest servers %v, want 3000, 862, 415, ...", counts[:6])
			}
			out, err := exec.Command(py, testenv.ReferencePy(), "census", filepath.Join(dir, release.ToolsFile)).Output()
			if err != nil {
				t.Fatalf("reference.py census: %v", err)
			}
			if file := readAll(t, filepath.Join(dir, TruthFile)); !bytes.Equal(out, file) {
				t.Errorf("truth.json differs from reference.py census:\n got %s\nwant %s", file, out)
			}
		})
	}
}

// TestHeavyTailOptions rejects a tail that leaves other servers no tools,
// and keeps the census without a tail unchanged by the option's zero value.
func TestHeavyTailOptions(t *testing.T) {
	for _, o := range []Options{
		{Tools: 100, Servers: 50, Seed: 1, Shape: ShapeServers, MaxServerTools: 60},
		{Tools: 100, Servers: 50, Seed: 1, Shape: ShapeServers, MaxServerTools: -1},
	} {
		if err := o.validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	a := toolCounts(5000, 300, 3)
	b := heavyTail(5000, 300, 2000, 3)
	if len(a) != len(b) {
		t.Fatalf("%d and %d servers", len(a), len(b))
	}
	same := true
	for i := range a {
		same = same && a[i] == b[i]
	}
	if same {
		t.Error("the heavy tail changed nothing")
	}
}
