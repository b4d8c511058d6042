package toolrule

import (
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/agnivade/levenshtein"
)

// NearDuplicateThreshold is the default similarity at or above which two
// tools available to one section are near-duplicates
// (docs/language.md#near-duplicate-tools); a run's limits may set another
// (NearDuplicatesAt).
const NearDuplicateThreshold = 0.90

// Described is one tool as the model sees it in a section: its alias and
// its model-facing description (after the add > bind/always > catalog
// precedence).
type Described struct {
	Alias       string
	Description string
}

// DupPair is a near-duplicate pair, A before B in input order.
type DupPair struct {
	A, B       Described
	Similarity float64
}

// Message is the Binding error text: both aliases, both descriptions and
// the similarity with two decimals.
func (p DupPair) Message() string {
	return fmt.Sprintf("tools %q and %q available to this section are near-duplicates (similarity %s): %q vs %q; a model cannot tell them apart, so drop one or make their descriptions differ",
		p.A.Alias, p.B.Alias, FormatSimilarity(p.Similarity), p.A.Description, p.B.Description)
}

// FormatSimilarity prints a similarity with two decimals, truncated rather
// than rounded so that 0.899 never prints as the threshold 0.90.
func FormatSimilarity(s float64) string {
	// The epsilon keeps 0.93 (stored as 0.92999...) from printing as 0.92.
	return fmt.Sprintf("%.2f", math.Floor(s*100+1e-9)/100)
}

// Normalize prepares a description for comparison: lower-case, drop every
// rune that is not a letter, digit or space, collapse white space, trim.
func Normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		case unicode.IsSpace(r):
			space = true
		}
	}
	return b.String()
}

// NormalizedLen is the rune length of Normalize(s), computed without
// building the string (the analyzer's near-duplicate pass rules most
// pairs out by length alone).
func NormalizedLen(s string) int {
	n, space := 0, false
	for _, r := range s {
		r = unicode.ToLower(r)
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && n > 0 {
				n++
			}
			space = false
			n++
		case unicode.IsSpace(r):
			space = true
		}
	}
	return n
}

// Similarity is 1 - levenshtein(a', b') / max(len(a'), len(b')) over the
// normalised texts, lengths in runes; two empty texts are identical (1).
func Similarity(a, b string) float64 {
	na, nb := Normalize(a), Normalize(b)
	la, lb := len([]rune(na)), len([]rune(nb))
	if la == 0 && lb == 0 {
		return 1
	}
	d := levenshtein.ComputeDistance(na, nb)
	return 1 - float64(d)/float64(max(la, lb))
}

// NearDuplicates returns every pair (i < j, in input order) whose
// similarity is at least NearDuplicateThreshold. The runtime fails on the
// first pair; the analyzer reports them all.
func NearDuplicates(descs []Described) []DupPair {
	return NearDuplicatesAt(descs, NearDuplicateThreshold)
}

// NearDuplicatesAt is NearDuplicates with an explicit threshold (a run
// limit).
func NearDuplicatesAt(descs []Described, threshold float64) []DupPair {
	var out []DupPair
	for i := 0; i < len(descs); i++ {
		for j := i + 1; j < len(descs); j++ {
			if s := Similarity(descs[i].Description, descs[j].Description); s >= threshold {
				out = append(out, DupPair{A: descs[i], B: descs[j], Similarity: s})
			}
		}
	}
	return out
}
