package sample

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// TestDrawRealCorpus draws from the bundled real schemas: the strata cover
// the population exactly once, every item is drawn from its own stratum,
// the same seed gives the same sample and another seed another, and the
// files read back as written.
func TestDrawRealCorpus(t *testing.T) {
	units, err := Units(bytes.NewReader(realcorpus.MustRead(t)), "tools.jsonl", "property")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := Units(bytes.NewReader(realcorpus.MustRead(t)), "tools.jsonl", "tool")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != realcorpus.Tools {
		t.Fatalf("%d tools, the corpus holds %d", len(tools), realcorpus.Tools)
	}
	described := 0
	for _, u := range units {
		if u.Description != "" {
			described++
		}
	}
	if len(units) <= len(tools) || described < len(units)/2 {
		t.Fatalf("%d properties, %d with a description: the enumeration or the description lookup is wrong", len(units), described)
	}
	s := Draw(units, "property", 30, 100, 7)
	total := 0
	for name, st := range s.Strata.Strata {
		total += st.Population
		if st.Drawn != min(st.Population, map[bool]int{true: 100, false: 30}[name == NegStratum]) {
			t.Errorf("stratum %s drew %d of %d", name, st.Drawn, st.Population)
		}
	}
	if total != len(units) || s.Strata.Population != len(units) {
		t.Errorf("strata hold %d units, the population is %d", total, len(units))
	}
	for _, it := range s.Items {
		if StratumOf(it) != it.Stratum {
			t.Errorf("item %d (rule %v) is in stratum %s", it.ID, it.Rule, it.Stratum)
		}
	}
	if again := Draw(units, "property", 30, 100, 7); !reflect.DeepEqual(again, s) {
		t.Error("the same seed drew another sample")
	}
	if other := Draw(units, "property", 30, 100, 8); reflect.DeepEqual(other.Items, s.Items) {
		t.Error("another seed drew the same sample")
	}
	dir := t.TempDir()
	items, strata, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"sample.jsonl": items, "strata.json": strata} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	back, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Items, s.Items) || !reflect.DeepEqual(back.Strata, s.Strata) {
		t.Error("the sample does not read back as written")
	}
}
