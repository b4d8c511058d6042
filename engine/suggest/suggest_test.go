package suggest

import "testing"

func TestClosest(t *testing.T) {
	cases := []struct {
		got   string
		cands []string
		want  string
	}{
		{"tool", []string{"tools", "models"}, "tools"},
		{"nmae", []string{"name", "description"}, "name"},
		{"## Revew", []string{"## Review", "## Plan"}, "## Review"},
		{"zzz", []string{"tools", "models"}, ""},
		{"x", []string{"y"}, "y"},
		{"same", []string{"same"}, ""},
	}
	for _, c := range cases {
		if got := Closest(c.got, c.cands); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.got, got, c.want)
		}
	}
}

// TestOneRule: the parser, the analyzers and the test file validator
// all propose through Closest, with its bound (a third of the longer name,
// rounded up), its case folding and its tie rule (the first candidate).
func TestOneRule(t *testing.T) {
	cases := []struct {
		got   string
		cands []string
		want  string
	}{
		// Frontmatter keys (engine/parse).
		{"descripton", []string{"name", "description", "promptforge"}, "description"},
		{"Name", []string{"name", "description"}, "name"},
		// Test file keys (cmd/internal/testrun): a short key
		// allows one edit, a long one more.
		{"inptu", []string{"input", "expect", "section"}, "input"},
		{"xyz", []string{"run", "input"}, ""},
		{"expect_contain", []string{"expect_contains", "expect_equals"}, "expect_contains"},
		// Ties keep the first candidate.
		{"ab", []string{"ac", "ad"}, "ac"},
		// Too far: more edits than a third of the longer name.
		{"models", []string{"tools"}, ""},
	}
	for _, c := range cases {
		if got := Closest(c.got, c.cands); got != c.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", c.got, c.cands, got, c.want)
		}
	}
}
