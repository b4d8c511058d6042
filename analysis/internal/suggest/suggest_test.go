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
