package parse

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

// TestContentLines: contentLines reads lines in place exactly as splitting
// the normalised, BOM-less text would (lone CR ends a line, CRLF keeps its
// CR, no empty line after a final line end).
func TestContentLines(t *testing.T) {
	ref := func(content []byte) []string {
		s := strings.TrimPrefix(string(source.NormalizeCR(content)), source.BOM)
		var out []string
		for line := range strings.Lines(s) {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
		return out
	}
	inputs := []string{"", "\n", "\r", "\r\n", "a", "a\n", "a\r", "a\r\nb", "a\rb\nc\r\n\r\n", source.BOM, source.BOM + "---\r\nx: 1\r---\n"}
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "-", "\n", "\r", "\r\n", " ", source.BOM}
	for range 2000 {
		var b strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		got := slices.Collect(contentLines([]byte(in)))
		if want := ref([]byte(in)); !slices.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", in, got, want)
		}
	}
}
