package bench

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunHeavyTail times a census beside its heavy-tailed twin: two rows,
// the second with the tail's largest server and a longer largest line, and
// gzip -dc measured beside the pipeline.
func TestRunHeavyTail(t *testing.T) {
	work := t.TempDir()
	bin := filepath.Join(work, "atlas-reproduce")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/atlas-reproduce").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("gzip"); err != nil {
		t.Fatalf("the benchmark times gzip -dc: %v", err)
	}
	rows, err := Run(context.Background(), Options{Tools: 3000, Scales: []int{1}, MaxServerTools: 800, Runs: 1, Binary: bin, Work: work})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].MaxServerTools != 0 || rows[1].MaxServerTools != 800 {
		t.Fatalf("rows %+v", rows)
	}
	for i, r := range rows {
		if r.Tools != 3000 || r.GzipDC <= 0 || r.Pipeline <= 0 || r.LargestLine == 0 {
			t.Errorf("row %d not measured: %+v", i, r)
		}
	}
	// 800 tools of a few hundred bytes each are one line.
	if rows[1].LargestLine < 100_000 || rows[1].LargestLine <= 2*rows[0].LargestLine {
		t.Errorf("largest lines %d and %d: no heavy tail", rows[0].LargestLine, rows[1].LargestLine)
	}
	var b bytes.Buffer
	WriteTable(&b, rows)
	if !strings.Contains(b.String(), "| 1× heavy tail | 3000 |") || !strings.Contains(b.String(), "| 1× | 3000 |") {
		t.Errorf("table:\n%s", b.String())
	}
}
