package parse

import "testing"

// TestParseTarget: a target is its # markers, whitespace (any Unicode
// space), then the name; a valid one is read without allocating (the
// analyses parse every jump target after each keystroke).
func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		target string
		level  int
		name   string
		ok     bool
	}{
		{"## Name", 2, "Name", true},
		{"  ### Deep name \n", 3, "Deep name", true},
		{"##\u00a0Wide", 2, "Wide", true},
		{"##\tTab", 2, "Tab", true},
		{"##Name", 0, "", false},
		{"##é", 0, "", false},
		{"##\xffName", 0, "", false},
		{"Name", 0, "", false},
		{"##  ", 0, "", false},
	} {
		level, name, err := ParseTarget(c.target)
		if (err == nil) != c.ok || level != c.level || name != c.name {
			t.Errorf("ParseTarget(%q) = %d, %q, %v; want %d, %q, ok %v", c.target, level, name, err, c.level, c.name, c.ok)
		}
	}
	target := "## A section with a long name, as long as any"
	if n := testing.AllocsPerRun(100, func() { _, _, _ = ParseTarget(target) }); n != 0 {
		t.Errorf("ParseTarget allocates %v times", n)
	}
}
