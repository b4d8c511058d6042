package toolrule

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzValidAlias: ValidAlias accepts exactly the strings AliasPattern
// matches in full.
func FuzzValidAlias(f *testing.F) {
	re := regexp.MustCompile(`^` + AliasPattern + `$`)
	for _, s := range []string{"", "a", "A-b_9", "1a", "_a", "-a", "a.b", "a b", "é", "a\n", "\na",
		strings.Repeat("x", 64), strings.Repeat("x", 65), "a\x00", "Z" + strings.Repeat("9", 63)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidAlias(s), re.MatchString(s); got != want {
			t.Fatalf("ValidAlias(%q) = %v, pattern says %v", s, got, want)
		}
	})
}
