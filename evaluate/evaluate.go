// Package evaluate measures the classifier against labelled samples: per
// class precision, recall and F1 with 95% intervals, the estimated number of
// units that truly carry each class beside the rules' count, agreement
// between raters, and the items to read (disagreements, false positives,
// misses). Every estimator is a pure function of the sample and the labels.
package evaluate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
)

// Agreement rules: how the raters' answers on an item make one truth.
const (
	Majority = "majority" // more than half of the raters who labelled the item
	Any      = "any"      // at least one
	All      = "all"      // every rater who labelled it
)

// Options steer Evaluate.
type Options struct {
	Agree     string // Majority (default), Any or All
	Bootstrap int    // bootstrap replicates; 0: 2000
	Seed      uint64 // the bootstrap's seed; the same seed gives the same intervals
}

// Interval is an estimate with its 95% interval.
type Interval struct {
	Estimate float64 `json:"estimate"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
}

// Num is a figure that may be undefined (NaN), written as null in JSON.
type Num float64

// MarshalJSON writes NaN and the infinities as null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// MarshalJSON writes undefined bounds as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Estimate Num `json:"estimate"`
		Low      Num `json:"low"`
		High     Num `json:"high"`
	}{Num(iv.Estimate), Num(iv.Low), Num(iv.High)})
}

// ClassResult is one class's evaluation.
type ClassResult struct {
	Class     string   `json:"class"`      // spec id, e.g. gg:credential-value
	Short     string   `json:"short"`      // labels' name, e.g. credential
	Precision Interval `json:"precision"`  // Wilson
	Recall    Interval `json:"recall"`     // stratified bootstrap, percentile
	F1        Interval `json:"f1"`         // stratified bootstrap, percentile
	RuleCount float64  `json:"rule_count"` // units the rules give the class (population)
	TrueCount Interval `json:"true_count"` // units estimated to truly carry it
	// RatioTrueToRule is TrueCount's estimate over RuleCount.
	RatioTrueToRule Num `json:"ratio_true_to_rule"`
	// Positives and Labelled are the rule-positive items labelled for the
	// precision and how many of them were true.
	TruePositives   int    `json:"true_positives"`
	RulePositives   int    `json:"rule_positives_labelled"`
	NegativeHits    int    `json:"misses_in_sample"`
	Kappa           Num    `json:"kappa"`        // NaN (null in JSON) when undefined
	KappaMethod     string `json:"kappa_method"` // cohen or fleiss
	KappaItems      int    `json:"kappa_items"`  // items every rater labelled
	RaterDisagreeOn int    `json:"rater_disagreements"`
}

// Finding is one item to read: a disagreement, a false positive or a miss.
type Finding struct {
	ID       int             `json:"id"`
	Class    string          `json:"class"`
	Kind     string          `json:"kind"` // "disagreement", "false-positive", "miss"
	Server   string          `json:"server"`
	Tool     string          `json:"tool"`
	Property string          `json:"property,omitempty"`
	Votes    map[string]bool `json:"votes,omitempty"` // rater name to answer
}

// Evaluation is the whole result, as evaluation.json holds it.
type Evaluation struct {
	Unit       string        `json:"unit"`
	Design     string        `json:"design"`
	Agree      string        `json:"agree"`
	Raters     []string      `json:"raters"`
	Items      int           `json:"items"`
	Labelled   int           `json:"labelled"`
	Bootstrap  int           `json:"bootstrap_replicates"`
	Seed       uint64        `json:"seed"`
	Methods    string        `json:"methods"`
	Classes    []ClassResult `json:"classes"`
	Findings   []Finding     `json:"findings"`
	Unlabelled []int         `json:"unlabelled,omitempty"`
}

// Methods states how the figures are estimated, for both outputs.
const methodsText = "Precision: Wilson 95% score interval (per-class design: on the class's own stratum; " +
	"disjoint strata: on the weighted proportion with Kish's effective sample size). Recall, F1 and the " +
	"true count: point estimates from the design's weights (each item weighs its stratum's population over " +
	"its sample size; per-class design: recall = precision x rule count / (precision x rule count + misses), " +
	"misses from the rule-negative stratum scaled to its population), intervals the 2.5 and 97.5 percentiles " +
	"of a bootstrap that resamples items within each stratum. Agreement: Cohen's kappa for two raters, " +
	"Fleiss' for more, on the items every rater labelled."

// unit is one labelled item reduced to what the estimators need.
type unit struct {
	stratum string
	rule    [5]bool
	truth   [5]bool
}

// Evaluate estimates every class from s and the raters' labels.
func Evaluate(s *sample.Sample, raters []sample.Rater, o Options) (*Evaluation, error) {
	if o.Agree == "" {
		o.Agree = Majority
	}
	if o.Agree != Majority && o.Agree != Any && o.Agree != All {
		return nil, fmt.Errorf("agreement %q is none of majority, any, all", o.Agree)
	}
	if len(raters) == 0 {
		return nil, fmt.Errorf("no labels")
	}
	if o.Bootstrap <= 0 {
		o.Bootstrap = 2000
	}
	ev := &Evaluation{Unit: s.Strata.Unit, Design: s.Strata.Design, Agree: o.Agree, Items: len(s.Items),
		Bootstrap: o.Bootstrap, Seed: o.Seed, Methods: methodsText, Findings: []Finding{}}
	for _, r := range raters {
		ev.Raters = append(ev.Raters, r.Name)
	}
	byStratum := map[string][]unit{}
	for _, it := range s.Items {
		var votes []sample.Label
		var names []string
		for _, r := range raters {
			if l, ok := r.Labels[it.ID]; ok {
				votes = append(votes, l)
				names = append(names, r.Name)
			}
		}
		if len(votes) == 0 {
			ev.Unlabelled = append(ev.Unlabelled, it.ID)
			continue
		}
		ev.Labelled++
		var u unit
		u.stratum = it.Stratum
		for ci, c := range sample.Classes {
			yes := 0
			for _, v := range votes {
				if v.Has(c) {
					yes++
				}
			}
			u.rule[ci] = it.RuleHas(c)
			switch o.Agree {
			case Majority:
				u.truth[ci] = 2*yes > len(votes)
			case Any:
				u.truth[ci] = yes > 0
			case All:
				u.truth[ci] = yes == len(votes)
			}
			f := Finding{ID: it.ID, Class: sample.ClassID[c], Server: it.Server, Tool: it.Tool, Property: it.Property}
			if yes > 0 && yes < len(votes) {
				f.Kind = "disagreement"
				f.Votes = map[string]bool{}
				for i, v := range votes {
					f.Votes[names[i]] = v.Has(c)
				}
				ev.Findings = append(ev.Findings, f)
			}
			if u.rule[ci] != u.truth[ci] {
				f.Votes = nil
				f.Kind = "false-positive"
				if u.truth[ci] {
					f.Kind = "miss"
				}
				ev.Findings = append(ev.Findings, f)
			}
		}
		byStratum[it.Stratum] = append(byStratum[it.Stratum], u)
	}
	names := slices.Sorted(mapsKeys(byStratum))
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	for ci, c := range sample.Classes {
		cr, err := estimateClass(s.Strata, names, byStratum, ci)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sample.ClassID[c], err)
		}
		cr.Class, cr.Short = sample.ClassID[c], c
		// The bootstrap: resample items within each stratum, recompute.
		var recs, f1s, trues []float64
		res := map[string][]unit{}
		for range o.Bootstrap {
			for _, n := range names {
				src := byStratum[n]
				dst := res[n][:0]
				for range src {
					dst = append(dst, src[rng.IntN(len(src))])
				}
				res[n] = dst
			}
			b, err := estimateClass(s.Strata, names, res, ci)
			if err != nil {
				return nil, err
			}
			if !math.IsNaN(b.Recall.Estimate) {
				recs = append(recs, b.Recall.Estimate)
			}
			if !math.IsNaN(b.F1.Estimate) {
				f1s = append(f1s, b.F1.Estimate)
			}
			trues = append(trues, b.TrueCount.Estimate)
		}
		cr.Recall.Low, cr.Recall.High = percentiles(recs)
		cr.F1.Low, cr.F1.High = percentiles(f1s)
		cr.TrueCount.Low, cr.TrueCount.High = percentiles(trues)
		agreement(cr, s, raters, c)
		ev.Classes = append(ev.Classes, *cr)
	}
	sort.SliceStable(ev.Findings, func(i, j int) bool {
		a, b := ev.Findings[i], ev.Findings[j]
		if a.Class != b.Class {
			return a.Class < b.Class
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.ID < b.ID
	})
	return ev, nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// estimateClass gives the point estimates of class ci from the labelled
// units of each stratum (a bootstrap replicate or the sample itself).
// Precision carries its Wilson interval; the rest only point estimates.
func estimateClass(st sample.Strata, names []string, units map[string][]unit, ci int) (*ClassResult, error) {
	cr := &ClassResult{}
	if st.Design == sample.PerClass {
		var pos, neg string
		for n, s := range st.Strata {
			if s.Class == nil {
				neg = n
			} else if short, _ := sample.ShortName(*s.Class); short == sample.Classes[ci] {
				pos = n
			}
		}
		if pos == "" {
			return nil, fmt.Errorf("the per-class design has no stratum for this class")
		}
		R := float64(st.Strata[pos].Population)
		tp := 0
		for _, u := range units[pos] {
			if u.truth[ci] {
				tp++
			}
		}
		n := len(units[pos])
		p := math.NaN()
		if n > 0 {
			p = float64(tp) / float64(n)
		}
		lo, hi := Wilson(float64(tp), float64(n), Z95)
		hits := 0
		for _, u := range units[neg] {
			if u.truth[ci] {
				hits++
			}
		}
		misses := 0.0
		if nn := len(units[neg]); nn > 0 {
			misses = float64(hits) / float64(nn) * float64(st.Strata[neg].Population)
		}
		cr.Precision = Interval{p, lo, hi}
		cr.TruePositives, cr.RulePositives, cr.NegativeHits = tp, n, hits
		cr.RuleCount = R
		tpPop := p * R
		cr.Recall.Estimate = tpPop / (tpPop + misses)
		cr.TrueCount.Estimate = tpPop + misses
		cr.F1.Estimate = f1(p, cr.Recall.Estimate)
		cr.RatioTrueToRule = Num(cr.TrueCount.Estimate / R)
		return cr, nil
	}
	// Disjoint strata: each unit weighs its stratum's population over the
	// number labelled in it.
	var tp, fp, fn, rule, w1, w2 float64
	for _, n := range names {
		us := units[n]
		if len(us) == 0 {
			continue
		}
		w := float64(st.Strata[n].Population) / float64(len(us))
		for _, u := range us {
			switch {
			case u.rule[ci] && u.truth[ci]:
				tp += w
			case u.rule[ci]:
				fp += w
			case u.truth[ci]:
				fn += w
			}
			if u.rule[ci] {
				rule += w
				w1 += w
				w2 += w * w
				cr.RulePositives++
				if u.truth[ci] {
					cr.TruePositives++
				}
			} else if u.truth[ci] {
				cr.NegativeHits++
			}
		}
	}
	p := tp / (tp + fp)
	// Kish's effective sample size carries the weighted proportion into
	// Wilson's formula.
	neff := 0.0
	if w2 > 0 {
		neff = w1 * w1 / w2
	}
	lo, hi := Wilson(p*neff, neff, Z95)
	if math.IsNaN(p) {
		lo, hi = 0, 1
	}
	cr.Precision = Interval{p, lo, hi}
	cr.RuleCount = rule
	cr.Recall.Estimate = tp / (tp + fn)
	cr.TrueCount.Estimate = tp + fn
	cr.F1.Estimate = f1(p, cr.Recall.Estimate)
	cr.RatioTrueToRule = Num(cr.TrueCount.Estimate / rule)
	return cr, nil
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// percentiles gives the 2.5th and 97.5th percentiles (nearest rank) of xs.
func percentiles(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(xs)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(xs)))) - 1
		return xs[max(0, min(len(xs)-1, i))]
	}
	return at(0.025), at(0.975)
}

// agreement fills the class's kappa over the items every rater labelled.
func agreement(cr *ClassResult, s *sample.Sample, raters []sample.Rater, class string) {
	cr.Kappa = Num(math.NaN())
	if len(raters) < 2 {
		return
	}
	var rows [][]int
	cols := make([][]int, len(raters))
	for _, it := range s.Items {
		row := []int{0, 0}
		ans := make([]int, 0, len(raters))
		for _, r := range raters {
			l, ok := r.Labels[it.ID]
			if !ok {
				break
			}
			v := 0
			if l.Has(class) {
				v = 1
			}
			row[v]++
			ans = append(ans, v)
		}
		if len(ans) != len(raters) {
			continue
		}
		if row[0] > 0 && row[1] > 0 {
			cr.RaterDisagreeOn++
		}
		rows = append(rows, row)
		for i, v := range ans {
			cols[i] = append(cols[i], v)
		}
	}
	cr.KappaItems = len(rows)
	if len(raters) == 2 {
		cr.KappaMethod = "cohen"
		k, _ := CohenKappa(cols[0], cols[1])
		cr.Kappa = Num(k)
	} else {
		cr.KappaMethod = "fleiss"
		k, _ := FleissKappa(rows)
		cr.Kappa = Num(k)
	}
}
