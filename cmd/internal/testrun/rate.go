package testrun

import (
	"fmt"
	"math"
	"strconv"
)

// wilsonZ is the normal quantile of a two-sided 95% interval.
const wilsonZ = 1.959963984540054

// Wilson is the 95% Wilson score interval of a pass rate observed as k
// passes in n runs (docs/testing.md#pass-rates). Unlike the normal
// approximation it stays inside [0, 1] and is meaningful for small n and
// for rates of 0 or 1.
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := wilsonZ * wilsonZ
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := wilsonZ / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return math.Max(0, centre-half), math.Min(1, centre+half)
}

// pct formats a share as a percentage, with one decimal only when needed.
func pct(x float64) string {
	v := math.Round(x*1000) / 10
	return strconv.FormatFloat(v, 'f', -1, 64) + "%"
}

// ParsePassRate reads a pass rate: a fraction in (0, 1] or a percentage
// such as "80%".
func ParsePassRate(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if n := len(s); err != nil && n > 1 && s[n-1] == '%' {
		v, err = strconv.ParseFloat(s[:n-1], 64)
		v /= 100
	}
	if err != nil || math.IsNaN(v) || v <= 0 || v > 1 {
		return 0, fmt.Errorf("a pass rate is a share of the runs greater than 0 and at most 1, such as 0.8 or 80%%; got %q", s)
	}
	return v, nil
}
