package evaluate

import (
	"math"
	"testing"
)

// TestWilsonPublished holds Wilson against the score intervals (method 3,
// without continuity correction) that Newcombe (1998), "Two-sided
// confidence intervals for the single proportion: comparison of seven
// methods", Statistics in Medicine 17:857-872, Table II, prints to four
// places.
func TestWilsonPublished(t *testing.T) {
	tests := []struct {
		k, n   float64
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
	}
	for _, tc := range tests {
		lo, hi := Wilson(tc.k, tc.n, Z95)
		if math.Abs(lo-tc.lo) > 0.00005 || math.Abs(hi-tc.hi) > 0.00005 {
			t.Errorf("Wilson(%v/%v) = [%.5f, %.5f], Newcombe prints [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0/0) = [%v, %v], want the whole range", lo, hi)
	}
}

// TestCohenKappaTextbook is the two-rater example of the "Cohen's kappa"
// article of Wikipedia (50 proposals read by two readers: 20 both yes, 15
// both no, 5 and 10 split), whose kappa is 0.4 exactly.
func TestCohenKappaTextbook(t *testing.T) {
	var a, b []int
	add := func(n, x, y int) {
		for range n {
			a, b = append(a, x), append(b, y)
		}
	}
	add(20, 1, 1)
	add(5, 1, 0)
	add(10, 0, 1)
	add(15, 0, 0)
	k, err := CohenKappa(a, b)
	if err != nil || math.Abs(k-0.4) > 1e-12 {
		t.Fatalf("kappa = %v, %v; want 0.4", k, err)
	}
	if k, _ := CohenKappa([]int{1, 1}, []int{1, 1}); !math.IsNaN(k) {
		t.Errorf("kappa of raters who never vary = %v; want NaN (undefined)", k)
	}
	if _, err := CohenKappa([]int{1}, nil); err == nil {
		t.Error("kappa of unequal answer lists gave no error")
	}
}

// TestFleissKappaTextbook is the worked example of the "Fleiss' kappa"
// article of Wikipedia (10 subjects, 14 raters, 5 categories), whose
// P-bar is 0.378, P-bar-e 0.213 and kappa 0.210.
func TestFleissKappaTextbook(t *testing.T) {
	counts := [][]int{
		{0, 0, 0, 0, 14},
		{0, 2, 6, 4, 2},
		{0, 0, 3, 5, 6},
		{0, 3, 9, 2, 0},
		{2, 2, 8, 1, 1},
		{7, 7, 0, 0, 0},
		{3, 2, 6, 3, 0},
		{2, 5, 3, 2, 2},
		{6, 5, 2, 1, 0},
		{0, 2, 2, 3, 7},
	}
	k, err := FleissKappa(counts)
	if err != nil || math.Abs(k-0.210) > 0.0005 {
		t.Fatalf("Fleiss kappa = %v, %v; want 0.210", k, err)
	}
	// With two raters on binary answers Fleiss' kappa is Scott's pi, which
	// equals Cohen's kappa when both raters have the same marginals.
	two := [][]int{{2, 0}, {2, 0}, {0, 2}, {1, 1}, {1, 1}, {0, 2}}
	a := []int{0, 0, 1, 0, 1, 1}
	b := []int{0, 0, 1, 1, 0, 1}
	kf, _ := FleissKappa(two)
	kc, _ := CohenKappa(a, b)
	if math.Abs(kf-kc) > 1e-12 {
		t.Errorf("Fleiss %v and Cohen %v differ on equal marginals", kf, kc)
	}
}
