package tables

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// TestReadToolsRoundTrip writes tools.parquet with the writer and reads it
// back with ReadTools, in full and names only: every row, in order, with
// nulls, invalid UTF-8, the definition hash and the class labels.
func TestReadToolsRoundTrip(t *testing.T) {
	rows := genRows(rand.New(rand.NewPCG(3, 4)), 70_000)
	toolsPq, _ := rows.write(t, func() int { return 4096 })
	path := filepath.Join(t.TempDir(), "tools.parquet")
	if err := os.WriteFile(path, toolsPq, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, namesOnly := range []bool{false, true} {
		var told int64 = -1
		n := 0
		err := ReadTools(context.Background(), path, ReadOptions{NamesOnly: namesOnly, Rows: func(r int64) { told = r }}, func(r *ToolRow) error {
			want := &rows.tools[n]
			if r.Ordinal != int64(n) || r.HasServer != (want.server != nil) || r.HasName != (want.name != nil) ||
				string(r.Server) != written(want.server) || string(r.Name) != written(want.name) {
				t.Fatalf("row %d: %d %q %v %q %v", n, r.Ordinal, r.Server, r.HasServer, r.Name, r.HasName)
			}
			wantDef, wantLabels, wantReq := want.def, want.labels&classify.Classes, want.required
			if namesOnly {
				wantDef, wantLabels, wantReq = Hash{}, 0, 0
			}
			if r.Definition != wantDef || r.Labels != wantLabels || r.Required != wantReq {
				t.Fatalf("row %d (names only %v): %x %v %v, want %x %v %v", n, namesOnly, r.Definition, r.Labels, r.Required, wantDef, wantLabels, wantReq)
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(rows.tools) || told != int64(n) {
			t.Fatalf("read %d rows, told %d, want %d", n, told, len(rows.tools))
		}
	}
	stop := errors.New("stop")
	if err := ReadTools(context.Background(), path, ReadOptions{}, func(*ToolRow) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("the callback's error came back as %v", err)
	}
}

// TestReadToolsNotATable: a Parquet file without the columns, and a file
// that is no Parquet, are errors naming the file.
func TestReadToolsNotATable(t *testing.T) {
	dir := t.TempDir()
	_, propsPq := genRows(rand.New(rand.NewPCG(1, 2)), 10).write(t, func() int { return 5 })
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"properties.parquet", "no definition_sha256 column", propsPq},
		{"garbage.parquet", "garbage.parquet", []byte("not parquet at all")},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := ReadTools(context.Background(), path, ReadOptions{}, func(*ToolRow) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an error naming the file and %q", tc.name, err, tc.want)
		}
	}
}

// written is a string as the tables hold it: invalid UTF-8 replaced.
func written(s *string) string {
	return string(bytes.ToValidUTF8(bytesOf(s), []byte("\uFFFD")))
}
