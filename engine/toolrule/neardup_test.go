package toolrule

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	cases := map[string]string{
		"  Search the WEB!  now ": "search the web now",
		"a\t\nb":                  "a b",
		"Ünïcode—dash, 42%":       "ünïcodedash 42",
		"":                        "",
		"!!!":                     "",
		"read_file: Read a file.": "readfile read a file",
		"x  \u00a0 y":             "x y",
	}
	for in, want := range cases {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSimilarity(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"!!", "  ", 1},
		{"abc", "", 0},
		{"Search the web", "search the web.", 1},
		{"kitten", "sitting", 1 - 3.0/7},
		{"héllo", "hallo", 0.8}, // runes, not bytes
	}
	for _, c := range cases {
		if got := Similarity(c.a, c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Similarity(%q,%q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if Similarity(c.a, c.b) != Similarity(c.b, c.a) {
			t.Errorf("not symmetric for %q %q", c.a, c.b)
		}
	}
}

func TestNearDuplicates(t *testing.T) {
	descs := []Described{
		{"search", "Search the web for current information"},
		{"fetch", "Fetch a web page as markdown"},
		{"search2", "Search the web for current information."},
		{"lookup", "Search the web for recent information"},
	}
	pairs := NearDuplicates(descs)
	// search/search2 identical after normalisation; search/lookup differ
	// by "current" -> "recent" (distance 5 over 38 runes = 0.868 < 0.90).
	if len(pairs) != 1 || pairs[0].A.Alias != "search" || pairs[0].B.Alias != "search2" || pairs[0].Similarity != 1 {
		t.Fatalf("pairs = %+v", pairs)
	}
	msg := pairs[0].Message()
	for _, want := range []string{`"search"`, `"search2"`, "similarity 1.00", "Search the web for current information.", "Search the web for current information\""} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// The threshold is inclusive: exactly 0.90 is a near-duplicate.
	a, b := strings.Repeat("a", 10), strings.Repeat("a", 9)+"b"
	if s := Similarity(a, b); s != 0.9 || len(NearDuplicates([]Described{{"x", a}, {"y", b}})) != 1 {
		t.Fatalf("inclusive threshold: %v", s)
	}
	if got := FormatSimilarity(0.93); got != "0.93" {
		t.Fatal(got)
	}
	if got := FormatSimilarity(0.8999); got != "0.89" {
		t.Fatal(got)
	}
}

func TestAlias(t *testing.T) {
	for _, ok := range []string{"a", "search", "Web-search_2", "A" + strings.Repeat("x", 63)} {
		if !ValidAlias(ok) {
			t.Errorf("%q should be valid", ok)
		}
	}
	for _, bad := range []string{"", "1a", "_a", "a.b", "a b", "é", "A" + strings.Repeat("x", 64), "a\n"} {
		if ValidAlias(bad) {
			t.Errorf("%q should be invalid", bad)
		}
	}
	if !ValidWireName("web.search-1_x") || ValidWireName("a/b") || ValidWireName("") || ValidWireName("a b") {
		t.Error("wire names")
	}
	if AliasError("tool", "1x") != `invalid tool alias "1x": expected [A-Za-z][A-Za-z0-9_-]{0,63}` {
		t.Error(AliasError("tool", "1x"))
	}
}

// FuzzNormalizedLen: NormalizedLen is the rune length of Normalize.
func FuzzNormalizedLen(f *testing.F) {
	for _, s := range []string{"", "Count the words", "  a\tB\n\nc  ", "İstanbul ÇAĞ", "x-y_z 1.5", "ǅ ǈ Σ ς", "\u00a0a\u2003b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := NormalizedLen(s), utf8.RuneCountInString(Normalize(s)); got != want {
			t.Fatalf("NormalizedLen(%q) = %d, want %d (%q)", s, got, want, Normalize(s))
		}
	})
}
