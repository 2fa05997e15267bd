package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// longestLine returns the number and length of the longest line of a
// gzipped JSON Lines file.
func longestLine(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(zr, 1<<20)
	best, bestLen := 0, -1
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if len(line) == 0 && err != nil {
			break
		}
		if l := len(strings.TrimSuffix(line, "\n")); l > bestLen {
			best, bestLen = n, l
		}
	}
	return best, bestLen
}

// makeGiantCensus writes a census whose first line is one server holding
// tools tools, with testdata/giant_census.py (the script BENCH.md measures
// memory with).
func makeGiantCensus(t *testing.T, n, tools int) (string, *synth.Truth) {
	t.Helper()
	data, truth := makeCensus(t, n)
	cmd := exec.Command("python3", filepath.Join("testdata", "giant_census.py"), data, fmt.Sprint(tools))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("giant_census.py: %v\n%s", err, out)
	}
	return data, truth
}

// TestMaxLineRefusesLongerLine: a line one byte over --max-line fails the
// run with exit 3, naming the file, the line and its size, and publishes
// nothing; at exactly its length the run passes.
func TestMaxLineRefusesLongerLine(t *testing.T) {
	data, _ := makeGiantCensus(t, 3000, 2000)
	line, size := longestLine(t, filepath.Join(data, release.ToolsFile))
	if size < 1<<19 {
		t.Fatalf("longest line is %d bytes, want a giant one", size)
	}
	tests := []struct {
		max  int
		code int
	}{
		{size - 1, exitFailure},
		{size / 3, exitFailure},
		{size, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, stderr, code := run(t, "", "run", "--data", data, "--no-verify", "--out", out, "--max-line", fmt.Sprint(tt.max))
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, stderr)
			}
			entries, _ := os.ReadDir(out)
			if tt.code == 0 {
				if _, err := os.Stat(filepath.Join(out, "report.json")); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := fmt.Sprintf("%s: line %d is %d bytes, longer than %d", release.ToolsFile, line, size, tt.max)
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr)
			}
			if len(entries) != 0 {
				t.Errorf("a refused run left %d files in the output folder", len(entries))
			}
		})
	}
	if _, stderr, code := run(t, "", "run", "--data", data, "--no-verify", "--out", t.TempDir(), "--max-line", "0"); code != 2 {
		t.Errorf("--max-line 0: exit %d, want 2\n%s", code, stderr)
	}
}

// TestGiantRecordCountsMatchTruth: a census whose largest line holds most
// of its tools (streamed two passes) counts every tool and class exactly as
// the generator's truth says, for one worker and for several.
func TestGiantRecordCountsMatchTruth(t *testing.T) {
	data, truth := makeGiantCensus(t, 8000, 6000)
	if _, size := longestLine(t, filepath.Join(data, release.ToolsFile)); size < 2<<20 {
		t.Fatalf("longest line is %d bytes, want more than 2 MiB", size)
	}
	var reports []string
	for _, workers := range []string{"1", "3"} {
		out := t.TempDir()
		if _, stderr, code := run(t, "", "run", "--workers", workers, "--data", data, "--no-verify", "--out", out); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Tools   int
			Classes map[string]struct{ Tools, Required int }
			Buckets map[string]struct{ Tools int }
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Tools != truth.Tools {
			t.Errorf("workers %s: %d tools, truth %d", workers, rep.Tools, truth.Tools)
		}
		for id, c := range truth.Classes {
			if rep.Classes[id].Tools != c.Tools || rep.Classes[id].Required != c.Required {
				t.Errorf("workers %s: %s: %+v, truth %+v", workers, id, rep.Classes[id], c)
			}
		}
		for id, n := range truth.Buckets {
			if rep.Buckets[id].Tools != n {
				t.Errorf("workers %s: %s: %d, truth %d", workers, id, rep.Buckets[id].Tools, n)
			}
		}
		tables, err := os.ReadFile(filepath.Join(out, "properties.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, string(tables))
	}
	if reports[0] != reports[1] {
		t.Error("properties.parquet differs between 1 and 3 workers")
	}
}
