package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// TestRunSmallScales runs the whole benchmark at two tiny scales, Python
// included at the first, and checks that every figure was measured. It
// asserts nothing about speed: timings belong to `make bench`.
func TestRunSmallScales(t *testing.T) {
	testenv.Python3(t)
	work := t.TempDir()
	bin := filepath.Join(work, "atlas-reproduce")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/atlas-reproduce").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	rows, err := Run(context.Background(), Options{Tools: 1500, Scales: []int{1, 2}, PythonScales: []int{1}, Runs: 1, Binary: bin, Work: work})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		if r.Tools != int64(1500*(i+1)) || r.JSONBytes == 0 || r.Gunzip <= 0 || r.Pipeline <= 0 || r.PipelineCPU <= 0 || r.RunRSS <= 0 || r.Classify <= 0 || r.Properties == 0 {
			t.Errorf("row %d not measured: %+v", i, r)
		}
		// The load average is read before each run and at the end.
		if runtime.GOOS == "linux" && r.Load.N != 2*1+1 {
			t.Errorf("row %d: %d load samples, want 3", i, r.Load.N)
		}
		if _, err := exec.LookPath("gzip"); err == nil && (r.GzipDC <= 0 || r.GzipDCCPU <= 0 || r.CPURatio[0] <= 0 || r.CPURatio[1] < r.CPURatio[0] || r.WallRatio[0] <= 0) {
			t.Errorf("row %d: gzip -dc not measured: %+v", i, r)
		}
	}
	if rows[0].Python <= 0 || rows[0].PythonRSS <= 0 || rows[1].Python != 0 {
		t.Errorf("Python timed at the wrong scales: %v, %v", rows[0].Python, rows[1].Python)
	}
	var b bytes.Buffer
	WriteTable(&b, rows)
	if n := strings.Count(b.String(), "\n"); n != 4 || !strings.Contains(b.String(), "| 2× | 3000 |") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	WriteHeadline(&b, rows)
	if n := strings.Count(b.String(), "\n"); n != 4 || !strings.Contains(b.String(), "| synthetic 2× | 3000 |") || !strings.Contains(b.String(), "CPU ratio") {
		t.Errorf("headline:\n%s", b.String())
	}
	if _, err := os.Stat(filepath.Join(work, "census-1x")); !os.IsNotExist(err) {
		t.Errorf("synthesised census left behind: %v", err)
	}
}

func TestReferenceEmbedded(t *testing.T) {
	onDisk, err := os.ReadFile("reference.py")
	if err != nil || !bytes.Equal(onDisk, referencePy) || !bytes.Contains(referencePy, []byte("PARAM_CLASSES")) {
		t.Fatal("the embedded reference is not bench/reference.py")
	}
}

// TestRunGivenFolders times two given censuses of different sizes into one
// headline, in the order given, and leaves the folders in place.
func TestRunGivenFolders(t *testing.T) {
	work := t.TempDir()
	bin := filepath.Join(work, "atlas-reproduce")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/atlas-reproduce").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var dirs []string
	for _, c := range []struct {
		name  string
		tools int
	}{{"small", 700}, {"larger", 1900}} {
		so := synth.DefaultOptions()
		so.Tools, so.Servers = c.tools, 40
		dir := filepath.Join(work, c.name)
		if _, err := synth.Write(context.Background(), dir, so); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	rows, err := Run(context.Background(), Options{Data: dirs, Scales: []int{1, 4}, MaxServerTools: 100, Runs: 1, Binary: bin, Work: work})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Name != "small" || rows[1].Name != "larger" || rows[0].Tools != 700 || rows[1].Tools != 1900 {
		t.Fatalf("rows %+v, want small (700 tools) then larger (1900), the scales ignored", rows)
	}
	var b bytes.Buffer
	WriteHeadline(&b, rows)
	h := b.String()
	if i, j := strings.Index(h, "| small | 700 |"), strings.Index(h, "| larger | 1900 |"); i < 0 || j < i {
		t.Errorf("headline:\n%s", h)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "SHA256SUMS")); err != nil {
			t.Errorf("a given census was touched: %v", err)
		}
	}
}
