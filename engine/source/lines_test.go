package source

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLinesBreaks pins the three line breaks and the lines they leave.
func TestLinesBreaks(t *testing.T) {
	for _, tc := range []struct {
		text   string
		starts []int
		ends   []int
	}{
		{"", []int{0}, []int{0}},
		{"a", []int{0}, []int{1}},
		{"a\nb", []int{0, 2}, []int{1, 3}},
		{"a\r\nb\r\n", []int{0, 3, 6}, []int{1, 4, 6}},
		{"a\rb\r", []int{0, 2, 4}, []int{1, 3, 4}},
		{"\r\n\r\r\n\n", []int{0, 2, 3, 5, 6}, []int{0, 2, 3, 5, 6}},
		{"\uFEFFx\ny", []int{0, 5}, []int{4, 6}},
	} {
		l := NewLines([]byte(tc.text))
		if !slices.Equal(l.starts, tc.starts) {
			t.Errorf("%q: starts %v, want %v", tc.text, l.starts, tc.starts)
			continue
		}
		for n := range l.Count() {
			if got := l.End([]byte(tc.text), n); got != tc.ends[n] {
				t.Errorf("%q: line %d ends at %d, want %d", tc.text, n, got, tc.ends[n])
			}
			if got := l.Line(l.Start(n)); got != n {
				t.Errorf("%q: Line(Start(%d)) = %d", tc.text, n, got)
			}
		}
	}
}

// TestLinesEdit checks that an index updated by Edit equals the index of
// the edited text built from scratch, over random texts and edits that
// join and part CR and LF, insert and delete line breaks at either end of
// the text.
func TestLinesEdit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\n", "\r", "\r\n", "é", "bc"}
	random := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for iter := range 20000 {
		text := random(r.IntN(12))
		l := NewLines([]byte(text))
		for range 4 {
			start := r.IntN(len(text) + 1)
			end := start + r.IntN(len(text)-start+1)
			ins := random(r.IntN(4))
			if iter%4 == 0 {
				// A long replacement, with CRs or LFs only.
				ins = random(r.IntN(80))
				if iter%8 == 0 {
					ins = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(ins)
				}
			}
			next := text[:start] + ins + text[end:]
			l.Edit([]byte(next), start, end, len(ins))
			want := NewLines([]byte(next))
			if !slices.Equal(l.starts, want.starts) || l.size != want.size {
				t.Fatalf("iteration %d: %q with [%d,%d) replaced by %q = %q: starts %v, want %v", iter, text, start, end, ins, next, l.starts, want.starts)
			}
			text = next
		}
	}
}

// TestLinesCloneIndependent: editing a clone leaves the original alone.
func TestLinesCloneIndependent(t *testing.T) {
	text := []byte("a\nb\nc")
	l := NewLines(text)
	c := l.Clone()
	c.Edit([]byte("a\nc"), 2, 4, 0)
	if l.Count() != 3 || c.Count() != 2 {
		t.Fatalf("original %d lines, clone %d; want 3 and 2", l.Count(), c.Count())
	}
}

// TestNewFileLines: a file made from a Lines index's starts has the line
// starts NewFile finds, for LF, CRLF and lone-CR text, with a BOM too;
// starts handed out by Starts are never written by later edits.
func TestNewFileLines(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"x", "\n", "\r\n", "\r", "é", "\uFEFF"}
	for range 500 {
		var b strings.Builder
		if r.IntN(5) == 0 {
			b.WriteString(BOM)
		}
		for range r.IntN(30) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := []byte(b.String())
		l := NewLines(text)
		starts := l.Starts()
		kept := slices.Clone(starts)
		got, want := NewFileLines("f", text, starts), NewFile("f", text)
		if !slices.Equal(got.LineStarts(), want.LineStarts()) || string(got.Content) != string(want.Content) {
			t.Fatalf("%q: NewFileLines starts %v, NewFile %v", text, got.LineStarts(), want.LineStarts())
		}
		// An edit after Starts leaves the handed-out starts alone.
		at := r.IntN(len(text) + 1)
		next := append(append(append([]byte{}, text[:at]...), "\n\r\ny"...), text[at:]...)
		l.Edit(next, at, at, 4)
		if !slices.Equal(starts, kept) {
			t.Fatalf("%q: an edit wrote to the starts Starts gave", text)
		}
		if !slices.Equal(l.starts, NewLines(next).starts) {
			t.Fatalf("%q: the index after the edit is wrong", next)
		}
	}
	// Starts that cannot be the text's are not taken.
	if f := NewFileLines("f", []byte("a\nb\n"), []int{0, 2}); !slices.Equal(f.LineStarts(), []int{0, 2, 4}) {
		t.Fatalf("wrong starts taken: %v", f.LineStarts())
	}
}

// TestLinesOfShares: an index made from a file's line starts edits a
// copy of them, leaving the file's as they were.
func TestLinesOfShares(t *testing.T) {
	text := []byte("a\nb\r\nc\rd")
	f := NewFile("f", text)
	was := slices.Clone(f.LineStarts())
	l := LinesOf(f.LineStarts(), len(text))
	next := []byte("a\nc\rd") // b's line deleted: fewer starts, moved in place
	l.Edit(next, 2, 5, 0)
	if got, want := l.Starts(), NewLines(next).Starts(); !slices.Equal(got, want) {
		t.Errorf("edited starts %v, want %v", got, want)
	}
	if !slices.Equal(f.LineStarts(), was) {
		t.Errorf("the file's starts became %v, were %v", f.LineStarts(), was)
	}
}
