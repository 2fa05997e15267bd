package tooldiff

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstNames holds FirstNames to the first named tool in file order
// for each prefix, whether it stops early (every prefix named) or reads
// to the end (a prefix no tool has).
func TestFirstNames(t *testing.T) {
	prefix := func(def string) string {
		h := sha256.Sum256([]byte(def))
		return hex.EncodeToString(h[:])[:12]
	}
	full := func(def string) string {
		h := sha256.Sum256([]byte(def))
		return hex.EncodeToString(h[:])
	}
	// firstWithNibble is the first named tool whose hash starts with the
	// hex digit c.
	firstWithNibble := func(c byte) string {
		for _, x := range []struct{ name, def string }{{"first-a", "A"}, {"first-b", "B"}, {"only-c", "C"}} {
			if full(x.def)[0] == c {
				return x.name
			}
		}
		return ""
	}
	dir := writeRun(t, []tool{
		{server: "s1", name: "", def: "A"}, // unnamed: not A's name
		{server: "s1", name: "first-a", def: "A"},
		{server: "s2", name: "first-b", def: "B"},
		{server: "s2", name: "second-a", def: "A"},
		{server: "s3", name: "second-b", def: "B"},
		{server: "s3", name: "only-c", def: "C"},
	})
	path := filepath.Join(dir, "tools.parquet")
	for _, tc := range []struct {
		name     string
		prefixes []string
		want     map[string]string
	}{
		{"all found early", []string{prefix("A"), prefix("B")},
			map[string]string{prefix("A"): "first-a", prefix("B"): "first-b"}},
		{"last row", []string{prefix("C")}, map[string]string{prefix("C"): "only-c"}},
		{"one missing", []string{prefix("B"), prefix("D")}, map[string]string{prefix("B"): "first-b"}},
		{"none", nil, map[string]string{}},
		{"odd length", []string{prefix("B")[:7], prefix("C")[:1]},
			map[string]string{prefix("B")[:7]: "first-b", prefix("C")[:1]: firstWithNibble(prefix("C")[0])}},
		{"whole hash", []string{full("A")}, map[string]string{full("A"): "first-a"}},
		{"upper case, too long, not hex", []string{strings.ToUpper(prefix("A")), full("A") + "0", "x" + prefix("A")[1:]},
			map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FirstNames(context.Background(), path, tc.prefixes)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
