package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestValidatePath(t *testing.T) {
	long := strings.Repeat("a", 1025)
	for _, tc := range []struct {
		p    string
		want string // "" = valid
	}{
		{"a", ""}, {"notes/a.md", ""}, {"a/b/c.txt", ""}, {".hidden", ""}, {"con_x", ""}, {"COM10", ""}, {"a..b", ""},
		{strings.Repeat(strings.Repeat("a", 99)+"/", 10) + strings.Repeat("a", 24), ""}, {strings.Repeat("s", 200), ""},
		{strings.Repeat("s", 201), "201 bytes, longer than 200"}, {"d/" + strings.Repeat("s", 256) + "/f", "longer than 200"},
		{"", "must not be empty"}, {long, "longer than 1024"}, {"/a", "relative"},
		{"a/../b", ". or .."}, {"..", ". or .."}, {".", ". or .."}, {"a/./b", ". or .."},
		{"a\\b", "backslash"}, {"a//b", "empty segment"}, {"a/", "empty segment"},
		{"a.", "ends in a dot"}, {"a ", "ends in a dot or a space"}, {"x/y. /z", "ends in a dot"},
		{"CON", "reserved"}, {"con.txt", "reserved"}, {"a/Nul.tar.gz", "reserved"}, {"COM1", "reserved"},
		{"lpt9.x", "reserved"}, {"PRN", "reserved"}, {"aux", "reserved"},
		{"a\x00b", "control"}, {"a\x7fb", "control"}, {"a\nb", "control"},
	} {
		err := ValidatePath(tc.p)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: unexpected %v", tc.p, err)
			}
			continue
		}
		var se *Error
		if !errors.As(err, &se) || se.Kind != InvalidPath || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want InvalidPath containing %q", tc.p, err, tc.want)
			continue
		}
		// The message names the path.
		if q := fmt.Sprintf("%q", tc.p); !strings.Contains(err.Error(), q[:min(len(q), 20)]) {
			t.Errorf("%q: message %q does not name the path", tc.p, err)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pat, path string
		want      bool
	}{
		{"notes/*.md", "notes/a.md", true},
		{"notes/*.md", "notes/x/a.md", false},
		{"**/*.md", "a.md", true},
		{"**/*.md", "x/y/a.md", true},
		{"**/*.md", "x/y/a.txt", false},
		{"**", "anything/at/all", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/c", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/bb", false},
		{"*", "a", true},
		{"*", "a/b", false},
		{"a?", "a?", true},
		{"a?", "ab", false},
		{"[ab]", "[ab]", true},
		{"{a,b}", "a", false},
		{"*.md", ".md", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"*a", "a/a", false},
	} {
		g, err := CompileGlob(tc.pat)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		if got := g.Match(tc.path); got != tc.want {
			t.Errorf("%q ~ %q = %v, want %v", tc.pat, tc.path, got, tc.want)
		}
	}
	for _, bad := range []string{"", "a/***", "a**", "**b/c", "a\\b", "a\x01", strings.Repeat("a", 1025)} {
		if _, err := CompileGlob(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestGlobNoBacktracking checks that a pathological pattern runs in
// linear-ish time (a backtracking matcher would take exponential time).
func TestGlobNoBacktracking(t *testing.T) {
	g, err := CompileGlob(strings.Repeat("*a", 100) + "b")
	if err != nil {
		t.Fatal(err)
	}
	if g.Match(strings.Repeat("a", 1000)) {
		t.Error("matched")
	}
}

func TestLinesAndRanges(t *testing.T) {
	s := New()
	if err := s.Write("f", "a\r\nb\nc\r"); err != nil {
		t.Fatal(err)
	}
	one, two := int64(1), int64(2)
	got, _ := s.ReadLines("f", &one, nil)
	if got != "a\nb\nc\r" {
		t.Errorf("lines = %q", got)
	}
	got, _ = s.ReadNumbered("f", &two, nil)
	if got != "2| b\n3| c\r" {
		t.Errorf("numbered = %q", got)
	}
	if _, err := s.ReadLines("f", nil, &one); err == nil || !strings.Contains(err.Error(), "start is required") {
		t.Errorf("got %v", err)
	}
}

func TestQuotas(t *testing.T) {
	s := New()
	s.SetLimits(10, 15)
	var se *Error
	if err := s.Write("a", strings.Repeat("x", 11)); !errors.As(err, &se) || se.Kind != Quota {
		t.Errorf("file cap: %v", err)
	}
	if err := s.Write("a", "0123456789"); err != nil {
		t.Fatal(err)
	}
	if err := s.Append("a", "x"); !errors.As(err, &se) || se.Kind != Quota {
		t.Errorf("append cap: %v", err)
	}
	if err := s.Write("b", "0123456"); !errors.As(err, &se) || se.Kind != Quota {
		t.Errorf("total cap: %v", err)
	}
	// Replacing a file frees its old size.
	if err := s.Write("a", "01"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write("b", "0123456"); err != nil {
		t.Errorf("after shrinking: %v", err)
	}
}

func TestRaceTracker(t *testing.T) {
	s := New()
	tr := NewRaceTracker()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = s.Write("p", "x", Claim{tr, i + 1})
		}(i)
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("want exactly one race error, got %v / %v", errs[0], errs[1])
	}
	if err := s.Write("q", "1", Claim{tr, 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write("q", "2", Claim{tr, 1}); err != nil {
		t.Errorf("same arm rewrite: %v", err)
	}
}
