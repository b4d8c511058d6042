package features

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

// TestSplitLines: cutting sorted tokens at line breaks with a moving line
// cursor gives the pieces a per-token line lookup gives, also for tokens
// that overlap a multi-line one before them, CRLF and a BOM.
func TestSplitLines(t *testing.T) {
	ref := func(f *source.File, toks []SemToken) []SemToken {
		var out []SemToken
		for _, t := range toks {
			for t.Start < t.End {
				l := f.Line(int(t.Start))
				le := int32(f.LineEnd(l))
				if t.End <= le || le < t.Start {
					out = append(out, t)
					break
				}
				if le > t.Start {
					out = append(out, SemToken{t.Start, le, t.Type, t.Mods})
				}
				t.Start = int32(f.LineStart(l + 1))
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 300; round++ {
		var b strings.Builder
		if round%5 == 0 {
			b.WriteString(source.BOM)
		}
		for n := rng.IntN(40); n > 0; n-- {
			b.WriteString(strings.Repeat("x", rng.IntN(12)))
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[rng.IntN(3)])
		}
		f := source.NewFile("t.md", []byte(b.String()))
		var toks []SemToken
		for n := rng.IntN(30); n > 0; n-- {
			s := rng.IntN(len(f.Content) + 1)
			e := min(s+rng.IntN(40), len(f.Content))
			toks = append(toks, SemToken{int32(s), int32(e), uint32(rng.IntN(4)), 0})
		}
		slices.SortStableFunc(toks, func(a, b SemToken) int { return int(a.Start) - int(b.Start) })
		want := ref(f, toks)
		got := splitLines(f, slices.Clone(toks))
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %q %v:\n got %v\nwant %v", round, f.Content, toks, got, want)
		}
	}
}
