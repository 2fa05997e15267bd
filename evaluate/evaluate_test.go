package evaluate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
)

func strp(s string) *string { return &s }

// TestDisjointHandComputed holds the disjoint-strata estimator against a
// hand computation for credential on a sample with unequal strata:
//
//	stratum A (population 100, 4 labelled): rule+ true, rule+ true, rule+ false, rule- false
//	stratum B (population 1000, 5 labelled): rule+ true, rule- true, rule- false x3
//
// weights 25 and 200: TP = 50 + 200 = 250, FP = 25, FN = 200, so precision
// 250/275, recall 250/450, the true count 450 and the rule count 275.
func TestDisjointHandComputed(t *testing.T) {
	s := &sample.Sample{Strata: sample.Strata{Unit: "property", Design: sample.Disjoint, Strata: map[string]sample.Stratum{
		"A": {Population: 100, Drawn: 4}, "B": {Population: 1000, Drawn: 5},
	}}}
	r := sample.Rater{Name: "x", Labels: map[int]sample.Label{}}
	add := func(stratum string, rule, truth bool) {
		id := len(s.Items)
		it := sample.Item{ID: id, Stratum: stratum, Rule: []string{}}
		if rule {
			it.Rule = []string{"gg:credential-value"}
		}
		s.Items = append(s.Items, it)
		r.Labels[id] = sample.Label{ID: id, Credential: truth}
	}
	add("A", true, true)
	add("A", true, true)
	add("A", true, false)
	add("A", false, false)
	add("B", true, true)
	add("B", false, true)
	for range 3 {
		add("B", false, false)
	}
	ev, err := Evaluate(s, []sample.Rater{r}, Options{Bootstrap: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := ev.Classes[0]
	if c.Class != "gg:credential-value" {
		t.Fatalf("first class %s", c.Class)
	}
	want := map[string][2]float64{
		"precision":  {c.Precision.Estimate, 250.0 / 275},
		"recall":     {c.Recall.Estimate, 250.0 / 450},
		"true count": {c.TrueCount.Estimate, 450},
		"rule count": {c.RuleCount, 275},
		"f1":         {c.F1.Estimate, 2 * (250.0 / 275) * (250.0 / 450) / (250.0/275 + 250.0/450)},
		"ratio":      {float64(c.RatioTrueToRule), 450.0 / 275},
	}
	for name, g := range want {
		if math.Abs(g[0]-g[1]) > 1e-9 {
			t.Errorf("%s = %v, hand computation %v", name, g[0], g[1])
		}
	}
	// Kish's effective size: weights 25,25,25,200: (275)^2/(3*625+40000).
	neff := 275.0 * 275 / (3*625 + 40000)
	lo, hi := Wilson(250.0/275*neff, neff, Z95)
	if c.Precision.Low != lo || c.Precision.High != hi {
		t.Errorf("precision interval [%v, %v], want Wilson at n_eff %v: [%v, %v]", c.Precision.Low, c.Precision.High, neff, lo, hi)
	}
	for _, iv := range []Interval{c.Recall, c.F1, c.TrueCount} {
		if !(iv.Low <= iv.Estimate+1e-9 && iv.Estimate <= iv.High+1e-9) {
			t.Errorf("bootstrap interval [%v, %v] leaves out the estimate %v", iv.Low, iv.High, iv.Estimate)
		}
	}
	if !math.IsNaN(float64(c.Kappa)) {
		t.Errorf("kappa with one rater = %v, want undefined", c.Kappa)
	}
}

// TestPerClassHandComputed holds the per-class design: money's precision
// from its own stratum (3 of 4 true), misses from the negative stratum (1
// of 5 true, population 500: 100), rule count 40, so recall
// 0.75*40/(30+100) and the true count 130.
func TestPerClassHandComputed(t *testing.T) {
	s := &sample.Sample{Strata: sample.Strata{Unit: "property", Design: sample.PerClass, Strata: map[string]sample.Stratum{
		"neg": {Population: 500, Drawn: 5}, "pos:money": {Population: 40, Drawn: 4, Class: strp("gg:money-amount")},
	}}}
	for _, c := range sample.Classes {
		if c != "money" {
			s.Strata.Strata["pos:"+c] = sample.Stratum{Population: 10, Drawn: 0, Class: strp(sample.ClassID[c])}
		}
	}
	a := sample.Rater{Name: "A", Labels: map[int]sample.Label{}}
	b := sample.Rater{Name: "B", Labels: map[int]sample.Label{}}
	add := func(stratum string, va, vb bool) {
		id := len(s.Items)
		it := sample.Item{ID: id, Stratum: stratum}
		if stratum != "neg" {
			it.Rule = []string{"gg:money-amount"}
		}
		s.Items = append(s.Items, it)
		a.Labels[id] = sample.Label{ID: id, Money: va}
		b.Labels[id] = sample.Label{ID: id, Money: vb}
	}
	add("pos:money", true, true)
	add("pos:money", true, true)
	add("pos:money", true, true)
	add("pos:money", true, false) // split: no majority of two
	add("neg", true, true)
	for range 4 {
		add("neg", false, false)
	}
	for _, tc := range []struct {
		agree     string
		precision float64
	}{{Majority, 0.75}, {Any, 1}, {All, 0.75}} {
		ev, err := Evaluate(s, []sample.Rater{a, b}, Options{Agree: tc.agree, Bootstrap: 100, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		var m ClassResult
		for _, c := range ev.Classes {
			if c.Short == "money" {
				m = c
			}
		}
		p := tc.precision
		if math.Abs(m.Precision.Estimate-p) > 1e-12 || math.Abs(m.TrueCount.Estimate-(p*40+100)) > 1e-9 ||
			math.Abs(m.Recall.Estimate-p*40/(p*40+100)) > 1e-12 {
			t.Errorf("agree %s: precision %v recall %v true %v; want %v, %v, %v", tc.agree,
				m.Precision.Estimate, m.Recall.Estimate, m.TrueCount.Estimate, p, p*40/(p*40+100), p*40+100)
		}
		lo, hi := Wilson(p*4, 4, Z95)
		if m.Precision.Low != lo || m.Precision.High != hi {
			t.Errorf("agree %s: precision interval not Wilson on the stratum", tc.agree)
		}
		// Kappa by hand: 9 items, agree on 8; A says yes 5, B 4:
		// po 8/9, pe (5*4 + 4*5)/81.
		pe := 40.0 / 81
		if k := (8.0/9 - pe) / (1 - pe); math.Abs(float64(m.Kappa)-k) > 1e-12 || m.KappaMethod != "cohen" {
			t.Errorf("kappa %v (%s), want Cohen %v", m.Kappa, m.KappaMethod, k)
		}
	}
	if _, err := Evaluate(s, []sample.Rater{a}, Options{Agree: "most"}); err == nil {
		t.Error("an unknown agreement rule gave no error")
	}
}

// TestSharedSample evaluates the bundled first part of the shared labelled
// sample (300 properties, per-class design, two raters) and holds the
// precisions its README states (majority of both raters).
func TestSharedSample(t *testing.T) {
	ev := sharedEvaluation(t)
	want := map[string]string{"filesystem": "93%", "url": "53%", "money": "47%", "command": "37%", "credential": "30%"}
	for _, c := range ev.Classes {
		if got := Pct(c.Precision.Estimate); got != want[c.Short] {
			t.Errorf("%s precision %s, the sample's README says %s", c.Short, got, want[c.Short])
		}
		if c.KappaItems != 300 || c.KappaMethod != "cohen" {
			t.Errorf("%s kappa over %d items by %s", c.Short, c.KappaItems, c.KappaMethod)
		}
		if c.NegativeHits > 4 {
			t.Errorf("%s: %d hits among the negatives; the README says 0 to 4", c.Short, c.NegativeHits)
		}
	}
	md := string(ev.Markdown())
	for _, s := range []string{"| `gg:filesystem-path` | 93%", "## False positives", "## Disagreements between raters"} {
		if !strings.Contains(md, s) {
			t.Errorf("evaluation.md lacks %q", s)
		}
	}
	b, err := ev.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(b)
	if err != nil || len(back.Classes) != 5 || back.Classes[1].Precision != ev.Classes[1].Precision {
		t.Fatalf("evaluation.json does not read back: %v", err)
	}
}

// sharedEvaluation reads and evaluates testdata/shared-sample.
func sharedEvaluation(t *testing.T) *Evaluation {
	t.Helper()
	dir := filepath.Join("testdata", "shared-sample")
	s, err := sample.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	known := map[int]bool{}
	for _, it := range s.Items {
		known[it.ID] = true
	}
	var raters []sample.Rater
	for _, n := range []string{"A", "B"} {
		r, err := sample.ReadLabels(filepath.Join(dir, "labels-"+n+".jsonl"), known)
		if err != nil {
			t.Fatal(err)
		}
		raters = append(raters, r)
	}
	ev, err := Evaluate(s, raters, Options{Seed: 1, Bootstrap: 500})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestReadRejects names the file and line of bad input.
func TestReadRejects(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "shared-sample")
	for _, f := range []string{"sample.jsonl", "strata.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "sample.jsonl" {
			lines := strings.SplitAfter(string(b), "\n")
			lines[2] = `{"id": 2, "stratum": "nowhere", "rule": []}` + "\n"
			b = []byte(strings.Join(lines, ""))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := sample.Read(dir)
	if err == nil || !strings.Contains(err.Error(), "sample.jsonl:3") || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("err = %v; want one naming sample.jsonl:3 and the stratum", err)
	}
}

// TestThreeRatersFleiss: with three raters the class's agreement is
// Fleiss' kappa over the items all three labelled, and the majority needs
// two of three; an item only one rater labelled counts by that rater alone.
func TestThreeRatersFleiss(t *testing.T) {
	s := &sample.Sample{Strata: sample.Strata{Unit: "property", Design: sample.Disjoint, Strata: map[string]sample.Stratum{
		"all": {Population: 50, Drawn: 5},
	}}}
	votes := [][3]bool{{true, true, false}, {true, false, false}, {false, false, false}, {true, true, true}}
	rs := []sample.Rater{{Name: "a", Labels: map[int]sample.Label{}}, {Name: "b", Labels: map[int]sample.Label{}}, {Name: "c", Labels: map[int]sample.Label{}}}
	var rows [][]int
	for i, v := range votes {
		s.Items = append(s.Items, sample.Item{ID: i, Stratum: "all", Rule: []string{"gg:url-endpoint"}})
		yes := 0
		for r := range rs {
			rs[r].Labels[i] = sample.Label{ID: i, URL: v[r]}
			if v[r] {
				yes++
			}
		}
		rows = append(rows, []int{3 - yes, yes})
	}
	s.Items = append(s.Items, sample.Item{ID: 4, Stratum: "all", Rule: []string{"gg:url-endpoint"}})
	rs[0].Labels[4] = sample.Label{ID: 4, URL: true}
	ev, err := Evaluate(s, rs, Options{Bootstrap: 100})
	if err != nil {
		t.Fatal(err)
	}
	u := ev.Classes[4]
	want, _ := FleissKappa(rows)
	if u.Short != "url" || u.KappaMethod != "fleiss" || float64(u.Kappa) != want || u.KappaItems != 4 || u.RaterDisagreeOn != 2 {
		t.Errorf("url: kappa %v by %s over %d items, %d disagreements; want Fleiss %v over 4, 2", u.Kappa, u.KappaMethod, u.KappaItems, u.RaterDisagreeOn, want)
	}
	if u.Precision.Estimate != 0.6 {
		t.Errorf("precision %v, want 3 of 5 (two by majority, one by its only rater)", u.Precision.Estimate)
	}
}
