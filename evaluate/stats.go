package evaluate

import (
	"errors"
	"math"
)

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson is the Wilson score interval (no continuity correction) for k
// successes in n trials at normal quantile z. k and n may be fractional (an
// effective sample size). n = 0 gives the whole range [0, 1].
func Wilson(k, n, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p := k / n
	z2 := z * z
	den := 1 + z2/n
	mid := (p + z2/(2*n)) / den
	half := z / den * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return math.Max(0, mid-half), math.Min(1, mid+half)
}

// CohenKappa is Cohen's kappa for two raters' answers on the same items
// (categories as ints). With no items, or when both raters always give one
// and the same category (chance agreement 1), it returns NaN.
func CohenKappa(a, b []int) (float64, error) {
	if len(a) != len(b) {
		return math.NaN(), errors.New("kappa: the raters answered different numbers of items")
	}
	n := float64(len(a))
	if n == 0 {
		return math.NaN(), nil
	}
	agree := 0.0
	ma, mb := map[int]float64{}, map[int]float64{}
	for i := range a {
		if a[i] == b[i] {
			agree++
		}
		ma[a[i]]++
		mb[b[i]]++
	}
	po := agree / n
	pe := 0.0
	for c, x := range ma {
		pe += x / n * mb[c] / n
	}
	if pe == 1 {
		return math.NaN(), nil
	}
	return (po - pe) / (1 - pe), nil
}

// FleissKappa is Fleiss' kappa: counts[i][j] is how many raters put item i
// in category j; every item must have the same number of raters (at least
// two). It returns NaN where chance agreement is 1.
func FleissKappa(counts [][]int) (float64, error) {
	if len(counts) == 0 {
		return math.NaN(), nil
	}
	m := 0
	for _, c := range counts[0] {
		m += c
	}
	if m < 2 {
		return math.NaN(), errors.New("fleiss kappa: fewer than two raters per item")
	}
	N := float64(len(counts))
	pj := make([]float64, len(counts[0]))
	pbar := 0.0
	for _, row := range counts {
		if len(row) != len(pj) {
			return math.NaN(), errors.New("fleiss kappa: rows with different numbers of categories")
		}
		s, sq := 0, 0
		for j, c := range row {
			s += c
			sq += c * c
			pj[j] += float64(c)
		}
		if s != m {
			return math.NaN(), errors.New("fleiss kappa: items with different numbers of raters")
		}
		pbar += float64(sq-m) / float64(m*(m-1))
	}
	pbar /= N
	pe := 0.0
	for _, x := range pj {
		p := x / (N * float64(m))
		pe += p * p
	}
	if pe == 1 {
		return math.NaN(), nil
	}
	return (pbar - pe) / (1 - pe), nil
}
