package testrun

import (
	"math"
	"strings"
	"testing"
)

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{3, 5, 0.2307, 0.8824}, {5, 5, 0.5655, 1}, {0, 5, 0, 0.4345}, {20, 20, 0.8389, 1}, {1, 1, 0.2065, 1}, {0, 0, 0, 1},
	} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("Wilson(%d, %d) = %.4f, %.4f; want %.4f, %.4f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func caseRes(name string, st Status, passes, runs int, in, out float64) CaseResult {
	c := CaseResult{File: "a.test.yaml", Name: name, Status: st, Runs: runs, Passes: passes, InputTokens: in, OutputTokens: out, Usage: in+out > 0}
	c.Rate = float64(passes) / float64(runs)
	lo, hi := Wilson(passes, runs)
	c.Interval = [2]float64{lo, hi}
	return c
}

// TestCompare covers each kind of change, and what is not one: a rate
// drop inside the baseline's interval, a token change of 10% or less,
// skipped cases.
func TestCompare(t *testing.T) {
	base := &ResultsFile{Cases: []CaseResult{
		caseRes("regresses", Pass, 1, 1, 100, 10),
		caseRes("fixed", Fail, 0, 1, 100, 10),
		caseRes("drops", Pass, 10, 10, 0, 0),
		caseRes("dips", Pass, 10, 10, 0, 0),
		caseRes("costlier", Pass, 1, 1, 100, 10),
		caseRes("cheaper", Pass, 1, 1, 100, 10),
		caseRes("about the same", Pass, 1, 1, 100, 10),
		caseRes("skipped now", Pass, 1, 1, 0, 0),
		caseRes("gone", Pass, 1, 1, 0, 0),
	}}
	skipped := caseRes("skipped now", Skip, 0, 1, 0, 0)
	now := &ResultsFile{Cases: []CaseResult{
		caseRes("regresses", Fail, 0, 1, 100, 10),
		caseRes("fixed", Pass, 1, 1, 100, 10),
		caseRes("drops", Pass, 6, 10, 0, 0),
		caseRes("dips", Pass, 8, 10, 0, 0),
		caseRes("costlier", Pass, 1, 1, 112, 10),
		caseRes("cheaper", Pass, 1, 1, 80, 10),
		caseRes("about the same", Pass, 1, 1, 110, 10),
		skipped,
		caseRes("new", Pass, 1, 1, 0, 0),
	}}
	cmp := Compare(base, now)
	var got []string
	for _, c := range cmp.Changes {
		got = append(got, c.Kind+" "+c.Name+" "+c.Detail)
	}
	want := []string{"regression regresses ", "rate drop drops ", "tokens costlier +11%", "tokens cheaper -18%", "fix fixed ", "new new ", "gone gone "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !cmp.Worse() || cmp.Compared != 7 {
		t.Errorf("worse %v, compared %d", cmp.Worse(), cmp.Compared)
	}
	if c := Compare(base, base); len(c.Changes) != 0 || c.Worse() {
		t.Errorf("identical: %+v", c.Changes)
	}
}
