package source

import "testing"

func TestPositions(t *testing.T) {
	f := NewFile("x", []byte("ab\r\ncd\né🚀x\n"))
	cases := []struct {
		off, line, col int
		lline, lchar   uint32
	}{
		{0, 1, 1, 0, 0},
		{2, 1, 3, 0, 2}, // the CR
		{4, 2, 1, 1, 0},
		{7, 3, 1, 2, 0},
		{9, 3, 3, 2, 1},  // after é (2 bytes, 1 UTF-16 unit)
		{13, 3, 7, 2, 3}, // after 🚀 (4 bytes, 2 units)
		{15, 4, 1, 3, 0}, // empty last line
		{99, 4, 1, 3, 0}, // clamped
		{-5, 1, 1, 0, 0}, // clamped
	}
	for _, c := range cases {
		l, col := f.Position(c.off)
		ll, lc := f.LSPPosition(c.off)
		if l != c.line || col != c.col || ll != c.lline || lc != c.lchar {
			t.Errorf("off %d: got %d:%d lsp %d:%d, want %d:%d lsp %d:%d", c.off, l, col, ll, lc, c.line, c.col, c.lline, c.lchar)
		}
	}
	if got := f.LSPOffset(2, 3); got != 13 {
		t.Errorf("LSPOffset(2,3) = %d, want 13", got)
	}
	if got := f.LSPOffset(2, 2); got != 9 { // inside the surrogate pair: rune start
		t.Errorf("LSPOffset(2,2) = %d, want 9", got)
	}
	if got := f.LSPOffset(0, 99); got != 2 { // clamps before CRLF
		t.Errorf("LSPOffset(0,99) = %d, want 2", got)
	}
	if f.LineEnd(1) != 2 || f.LineEnd(2) != 6 || f.LineStart(3) != 7 || f.LineCount() != 4 {
		t.Errorf("line table: end1=%d end2=%d start3=%d count=%d", f.LineEnd(1), f.LineEnd(2), f.LineStart(3), f.LineCount())
	}
}

func TestBOMDoesNotShiftColumns(t *testing.T) {
	f := NewFile("x", []byte("\uFEFF---\nx"))
	if !f.HasBOM() {
		t.Fatal("BOM not detected")
	}
	if l, c := f.Position(3); l != 1 || c != 1 {
		t.Fatalf("first char after BOM at %d:%d", l, c)
	}
	if l, c := f.LSPPosition(4); l != 0 || c != 1 {
		t.Fatalf("lsp %d:%d", l, c)
	}
	if f.LSPOffset(0, 0) != 3 || f.Offset(2, 1) != 7 {
		t.Fatalf("offsets")
	}
}

func TestLoneCRIsALineEnd(t *testing.T) {
	in := []byte("a\rb\r\nc\rd")
	f := NewFile("x", in)
	if f.LineCount() != 4 {
		t.Fatalf("%d lines, want 4", f.LineCount())
	}
	for off, want := range map[int]int{0: 1, 2: 2, 5: 3, 7: 4} {
		if got := f.Line(off); got != want {
			t.Errorf("Line(%d) = %d, want %d", off, got, want)
		}
	}
	if string(f.Content) != "a\nb\r\nc\nd" || string(in) != "a\rb\r\nc\rd" {
		t.Errorf("content %q (input %q): lone CRs become LF in a copy", f.Content, in)
	}
	if g := NewFile("y", []byte("a\r\nb")); string(g.Content) != "a\r\nb" {
		t.Errorf("CRLF changed: %q", g.Content)
	}
}

// TestLine checks Line against a search of the line table at every
// offset, with and without a BOM and a final newline.
func TestLine(t *testing.T) {
	for _, s := range []string{"", "\n", "a", "a\nb", "a\n\nb\n", BOM + "x\ny", BOM, "\n\n\n"} {
		f := NewFile("x", []byte(s))
		for off := -2; off <= len(s)+2; off++ {
			want := 0
			c := f.clamp(off)
			for want < len(f.lines) && f.lines[want] <= c {
				want++
			}
			if got := f.Line(off); got != want {
				t.Errorf("%q: Line(%d) = %d, want %d", s, off, got, want)
			}
		}
		if got := f.LineStarts(); len(got) != f.LineCount() {
			t.Errorf("%q: %d line starts for %d lines", s, len(got), f.LineCount())
		}
	}
}
