package evaluate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
)

// JSON is evaluation.json's content.
func (ev *Evaluation) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(ev, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Read parses evaluation.json.
func Read(b []byte) (*Evaluation, error) {
	var ev Evaluation
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	if len(ev.Classes) == 0 {
		return nil, fmt.Errorf("no classes: not an evaluation.json")
	}
	return &ev, nil
}

// UnmarshalJSON reads null bounds back as NaN.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v struct{ Estimate, Low, High *float64 }
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	get := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	iv.Estimate, iv.Low, iv.High = get(v.Estimate), get(v.Low), get(v.High)
	return nil
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = Num(f)
	return err
}

// Pct formats a proportion as a percentage, "n/a" when undefined.
func Pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

// PctInterval is "53% (35–70%)".
func PctInterval(iv Interval) string {
	if math.IsNaN(iv.Estimate) {
		return "n/a"
	}
	return fmt.Sprintf("%s (%s–%s)", Pct(iv.Estimate), Pct(iv.Low), Pct(iv.High))
}

// CountInterval is "71 (45–120)".
func CountInterval(iv Interval) string {
	if math.IsNaN(iv.Estimate) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f (%.0f–%.0f)", iv.Estimate, iv.Low, iv.High)
}

func kappaText(k Num) string {
	if math.IsNaN(float64(k)) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(k))
}

// Table is the per-class Markdown table both evaluation.md and the run's
// report show.
func (ev *Evaluation) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| class | precision | recall | F1 | rule count | estimated true count | true / rule | kappa |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range ev.Classes {
		ratio := "n/a"
		if !math.IsNaN(float64(c.RatioTrueToRule)) {
			ratio = fmt.Sprintf("%.2fx", float64(c.RatioTrueToRule))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %.0f | %s | %s | %s |\n", c.Class,
			PctInterval(c.Precision), PctInterval(c.Recall), PctInterval(c.F1), c.RuleCount,
			CountInterval(c.TrueCount), ratio, kappaText(c.Kappa))
	}
	return b.String()
}

// Markdown is evaluation.md: the table, the method, and the items to read.
func (ev *Evaluation) Markdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# How good are these labels\n\n")
	fmt.Fprintf(&b, "Unit: %s. Design: %s. %d items, %d labelled, by %d rater(s) (%s); an item carries a class when %s.\n\n",
		ev.Unit, ev.Design, ev.Items, ev.Labelled, len(ev.Raters), strings.Join(ev.Raters, ", "), agreeText(ev.Agree))
	b.WriteString(ev.Table())
	fmt.Fprintf(&b, "\n%s Bootstrap: %d replicates, seed %d.\n", ev.Methods, ev.Bootstrap, ev.Seed)
	if len(ev.Unlabelled) > 0 {
		fmt.Fprintf(&b, "\n%d item(s) have no label yet and are left out.\n", len(ev.Unlabelled))
	}
	for _, kind := range []struct{ kind, title string }{
		{"false-positive", "False positives (the rules give the class, the labels do not)"},
		{"miss", "Misses (the labels give the class, the rules do not)"},
		{"disagreement", "Disagreements between raters"},
	} {
		fmt.Fprintf(&b, "\n## %s\n\n", kind.title)
		n := 0
		for _, f := range ev.Findings {
			if f.Kind != kind.kind {
				continue
			}
			n++
			votes := ""
			if len(f.Votes) > 0 {
				var vs []string
				for _, r := range ev.Raters {
					if v, ok := f.Votes[r]; ok {
						vs = append(vs, fmt.Sprintf("%s: %v", r, v))
					}
				}
				votes = " (" + strings.Join(vs, ", ") + ")"
			}
			fmt.Fprintf(&b, "- `%s` item %d: %s / %s / %s%s\n", f.Class, f.ID,
				termtext.Markdown(f.Server), termtext.Markdown(f.Tool), termtext.Markdown(f.Property), votes)
		}
		if n == 0 {
			b.WriteString("None.\n")
		}
	}
	return []byte(b.String())
}

func agreeText(a string) string {
	switch a {
	case Any:
		return "any rater gives it"
	case All:
		return "every rater who labelled it gives it"
	}
	return "more than half of the raters who labelled it give it"
}
