package envvar

import (
	"errors"
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "x", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, c := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}", "x", ""},
		{"a${A}b${EMPTY}c", "axbc", ""},
		{"$$", "$", ""},
		{"$${A}", "${A}", ""},
		{"cost $5", "cost $5", ""},
		{"end$", "end$", ""},
		{"${A", "", "unclosed"},
		{"${B}", "", "unset B"},
	} {
		got, err := Expand(c.in, lookup)
		var ue *UnsetError
		switch {
		case c.err == "unclosed":
			if !errors.Is(err, ErrUnclosed) {
				t.Errorf("%q: err %v, want ErrUnclosed", c.in, err)
			}
		case c.err != "":
			if !errors.As(err, &ue) || ue.Name != "B" {
				t.Errorf("%q: err %v, want UnsetError B", c.in, err)
			}
		case err != nil || got != c.want:
			t.Errorf("%q = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
