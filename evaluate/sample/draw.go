package sample

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
)

// NegStratum is the name of the rule-negative stratum.
const NegStratum = "neg"

// StratumOf is the disjoint stratum of a unit: "pos:<class>" for the first
// of its rule classes in Classes order, NegStratum when it has none. A unit
// with two classes is drawn under the first only, so strata never overlap.
func StratumOf(it Item) string {
	for _, c := range Classes {
		if it.RuleHas(c) {
			return "pos:" + ClassID[c]
		}
	}
	return NegStratum
}

// Draw draws a stratified random sample from the population: perClass
// units from each class's stratum and neg from the rule-negative one (all
// of a stratum when it is smaller), seeded so that the same population and
// seed give the same sample. Items are numbered in draw order.
func Draw(population []Item, unit string, perClass, neg int, seed uint64) *Sample {
	byStratum := map[string][]int{}
	for i, it := range population {
		s := StratumOf(it)
		byStratum[s] = append(byStratum[s], i)
	}
	sd := int64(seed)
	s := &Sample{Strata: Strata{Unit: unit, Population: len(population), Design: Disjoint, Seed: &sd, Strata: map[string]Stratum{}}}
	rng := rand.New(rand.NewPCG(seed, 0x5a3913))
	names := []string{}
	for _, c := range Classes {
		names = append(names, "pos:"+ClassID[c])
	}
	names = append(names, NegStratum)
	for _, name := range names {
		idx := byStratum[name]
		want := perClass
		var class *string
		if name == NegStratum {
			want = neg
		} else {
			c := name[len("pos:"):]
			class = &c
		}
		want = min(want, len(idx))
		// A partial Fisher-Yates shuffle: the first want are a uniform
		// draw without replacement.
		idx = slices.Clone(idx)
		for i := range want {
			j := i + rng.IntN(len(idx)-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		s.Strata.Strata[name] = Stratum{Population: len(byStratum[name]), Drawn: want, Class: class}
		for _, i := range idx[:want] {
			it := population[i]
			it.ID = len(s.Items)
			it.Stratum = name
			s.Items = append(s.Items, it)
		}
	}
	return s
}

// Encode gives sample.jsonl and strata.json.
func (s *Sample) Encode() (items, strata []byte, err error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, it := range s.Items {
		if it.Rule == nil {
			it.Rule = []string{}
		}
		if err := enc.Encode(it); err != nil {
			return nil, nil, fmt.Errorf("item %d: %w", it.ID, err)
		}
	}
	st, err := json.MarshalIndent(s.Strata, "", " ")
	if err != nil {
		return nil, nil, err
	}
	return b.Bytes(), append(st, '\n'), nil
}
