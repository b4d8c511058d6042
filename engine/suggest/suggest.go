// Package suggest is the one did-you-mean rule: the parser (frontmatter
// keys), the analyzers (section names, aliases, API members) and the test
// file validator (keys) all propose the candidate Closest picks.
package suggest

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// Closest returns the candidate nearest to got by edit distance (case
// folded), or "" when none is close enough: at most a third of the longer
// name's length, rounded up. Ties keep the first
// candidate, so callers control preference by order.
func Closest(got string, candidates []string) string {
	best, bestD := "", -1
	lg := strings.ToLower(got)
	for _, c := range candidates {
		if c == got {
			continue
		}
		d := levenshtein.ComputeDistance(lg, strings.ToLower(c))
		limit := (max(len(got), len(c)) + 2) / 3
		if d > limit {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
