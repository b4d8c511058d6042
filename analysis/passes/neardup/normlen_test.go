package neardup

import (
	"math/rand"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// TestNormLen checks the ASCII fast path against the engine's
// toolrule.NormalizedLen: every byte alone and between letters, and
// random strings of ASCII and non-ASCII text.
func TestNormLen(t *testing.T) {
	var cases []string
	for c := 0; c < 256; c++ {
		cases = append(cases, string(rune(c)), "a"+string([]byte{byte(c)})+"b", " x"+string([]byte{byte(c)})+" ")
	}
	alphabet := []string{"a", "Z", "0", " ", "\t", "\n", "\v", "\f", "\r", ".", "!", "_", "-", "é", "Ü", "\u00a0", "\u0085", "\u2003", "ß", "日"}
	r := rand.New(rand.NewSource(1))
	for range 5000 {
		s := ""
		for range r.Intn(20) {
			s += alphabet[r.Intn(len(alphabet))]
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		if got, want := normLen(s), toolrule.NormalizedLen(s); got != want {
			t.Errorf("normLen(%q) = %d, toolrule.NormalizedLen %d", s, got, want)
		}
	}
}
