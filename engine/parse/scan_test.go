package parse

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// TestAtxStart checks atxStart against the regular expression it
// replaces, on every line of the sample inputs and on generated lines.
func TestAtxStart(t *testing.T) {
	re := regexp.MustCompile(`^#{1,6}([ \t]|\n|$)`)
	lines := []string{"", "#", "######", "#######", "# a", "#\ta", "#\n", "##\r\n", "#a", " #", "###### x", "####### x", "#\v", "##"}
	testdata, examples := sampleInputs(t)
	for _, in := range append(testdata, examples...) {
		for _, l := range strings.SplitAfter(string(in), "\n") {
			lines = append(lines, l)
		}
	}
	r := rand.New(rand.NewSource(1))
	for range 5000 {
		b := make([]byte, r.Intn(10))
		for i := range b {
			b[i] = "##### \t\n\ra"[r.Intn(10)]
		}
		lines = append(lines, string(b))
	}
	for _, l := range lines {
		if got, want := atxStart([]byte(l)), re.MatchString(l); got != want {
			t.Errorf("atxStart(%q) = %v, want %v", l, got, want)
		}
	}
}

// findCloserLines is findCloser as it was first written: line by line.
func findCloserLines(s string, rel int) (int, bool) {
	i := strings.IndexByte(s[rel:], '\n')
	if i < 0 {
		return 0, false
	}
	off := rel + i + 1
	for off <= len(s) {
		e := strings.IndexByte(s[off:], '\n')
		line := s[off:]
		if e >= 0 {
			line = line[:e]
		}
		if line == "```" {
			return off, true
		}
		if e < 0 {
			break
		}
		off += e + 1
	}
	return 0, false
}

// TestFindCloser checks findCloser, which searches for backticks,
// against the line-by-line scan, from every offset of generated texts.
func TestFindCloser(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	parts := []string{"```", "```lua", "\n", "x", " ```", "````", "\r", "``", "`"}
	for range 3000 {
		var b strings.Builder
		for range r.Intn(12) {
			b.WriteString(parts[r.Intn(len(parts))])
		}
		s := b.String()
		for rel := 0; rel <= len(s); rel++ {
			at, ok := findCloser(s, rel)
			wantAt, wantOK := findCloserLines(s, rel)
			if at != wantAt || ok != wantOK {
				t.Fatalf("findCloser(%q, %d) = %d, %v, want %d, %v", s, rel, at, ok, wantAt, wantOK)
			}
		}
	}
}

// TestSlab checks that slab hands out distinct zeroed values in groups
// no larger than the parse needs.
func TestSlab(t *testing.T) {
	var s slab[luaBlock]
	seen := map[*luaBlock]bool{}
	for i := range 100 {
		p := s.alloc(100)
		if seen[p] || p.c.Source != "" || p.b.Chunk != nil {
			t.Fatalf("alloc %d: reused or not zero", i)
		}
		p.c.Source = "x"
		seen[p] = true
	}
	if len(s.free) != 0 {
		t.Errorf("%d values left over after allocating the total", len(s.free))
	}
	var one slab[sectionHeading]
	one.alloc(1)
	if cap(one.free) != 0 {
		t.Errorf("a group of %d for a total of 1", cap(one.free)+1)
	}
}
