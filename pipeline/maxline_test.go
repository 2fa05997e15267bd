package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMaxLine: a line over Options.MaxLine, in the tools file or in a side
// file, shorter or longer than a chunk, fails the run naming the file, the
// line and its length, and publishes nothing.
func TestMaxLine(t *testing.T) {
	defer goleak.VerifyNone(t)
	long := `{"server_id": "x", "tools": [{"name": "` + strings.Repeat("n", 9000) + `"}]}`
	cand := []byte("{\"url\": \"https://x\"}\n")
	tests := []struct {
		name       string
		tools      []byte
		candidates []byte
		max        int
		want       string
	}{
		{"tools line over a chunk", gz(t, append(append(goodTools(2), long...), '\n')), cand, 5000,
			fmt.Sprintf("server_tools.jsonl.gz: line 3 is %d bytes, longer than 5000 (--max-line)", len(long))},
		{"tools line within a chunk", gz(t, append(goodTools(3), long...)), cand, 8999,
			fmt.Sprintf("server_tools.jsonl.gz: line 4 is %d bytes, longer than 8999 (--max-line)", len(long))},
		{"side file line", gz(t, goodTools(3)), append(append(cand, long...), '\n'), 100,
			fmt.Sprintf("candidates_remotes.jsonl: line 2 is %d bytes, longer than 100 (--max-line)", len(long))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, m := writeCensus(t, tc.tools, tc.candidates)
			out := t.TempDir()
			_, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "m", Workers: 2, ChunkSize: 4096, MaxLine: tc.max})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			assertNoOutputs(t, out)
		})
	}
	// At exactly its length the line passes.
	data, m := writeCensus(t, gz(t, append(append(goodTools(2), long...), '\n')), cand)
	if _, err := Run(context.Background(), Options{Data: data, Out: t.TempDir(), Manifest: m, ManifestName: "m", Workers: 2, ChunkSize: 4096, MaxLine: len(long)}); err != nil {
		t.Fatal(err)
	}
}
