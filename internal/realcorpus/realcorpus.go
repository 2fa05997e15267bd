// Package realcorpus opens the real MCP tool schemas that the repository
// bundles for its tests and benchmarks (testdata/real-mcp-tools), so that a
// clone with nothing beside it has them.
package realcorpus

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/atlas-reproduce/atlas-reproduce/internal/gunzip"
)

// Tools is the number of tool records the corpus holds; tests check it so
// that a truncated copy cannot pass unnoticed.
const Tools = 5606

// Path is the gzipped JSON Lines file, found from this source file's place
// in the module so that tests in any package reach it.
func Path() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("realcorpus: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "testdata", "real-mcp-tools", "tools.jsonl.gz")
}

// Read returns the decompressed corpus: one JSON object per line, each
// ending in "\n".
func Read() ([]byte, error) {
	f, err := os.Open(Path())
	if err != nil {
		return nil, fmt.Errorf("real corpus: %w", err)
	}
	defer f.Close()
	zr, err := gunzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("real corpus %s: %w", Path(), err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("real corpus %s: %w", Path(), err)
	}
	return data, nil
}

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// MustRead is Read for tests and benchmarks: a missing or damaged corpus
// fails them, never skips them.
func MustRead(t TB) []byte {
	t.Helper()
	data, err := Read()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return data
}

// Lines splits the corpus on "\n" only, as the Python reference's reader
// does, and checks that every record is there.
func Lines(t TB) [][]byte {
	t.Helper()
	data := MustRead(t)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != Tools {
		t.Fatalf("real corpus %s has %d lines, want %d", Path(), len(lines), Tools)
	}
	return lines
}

// BenchDirEnv names the folder of a full-size census (bench-data/real,
// say) that benchmarks read when it is set.
const BenchDirEnv = "ATLAS_BENCH_DIR"

// SkipTB is the part of testing.TB that BenchCensus uses.
type SkipTB interface {
	TB
	Skip(args ...any)
}

// BenchCensus returns the whole lines within the first limit bytes of the
// decompressed server_tools.jsonl.gz in $ATLAS_BENCH_DIR, each ending in
// "\n"; the benchmark skips when the variable is not set.
func BenchCensus(t SkipTB, limit int64) []byte {
	t.Helper()
	dir := os.Getenv(BenchDirEnv)
	if dir == "" {
		t.Skip(BenchDirEnv + " is not set: no census to read")
	}
	path := filepath.Join(dir, "server_tools.jsonl.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer f.Close()
	zr, err := gunzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, limit))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data[:bytes.LastIndexByte(data, '\n')+1]
}
