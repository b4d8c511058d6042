package source

import (
	"math/rand/v2"
	"strings"
	"testing"
)

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
	// An offset inside the BOM (a span at 0) is the start of line 1.
	for off := 0; off < 3; off++ {
		if l, c := f.LSPPosition(off); l != 0 || c != 0 {
			t.Errorf("LSPPosition(%d) = %d:%d, want 0:0", off, l, c)
		}
		if l, _ := f.Position(off); l != 1 {
			t.Errorf("Position(%d) is on line %d, want 1", off, l)
		}
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
// offset, with and without a BOM and a final newline. An offset inside the
// BOM is on line 1 (it once was line 0, and converting it to an LSP
// position indexed the line table at -1).
func TestLine(t *testing.T) {
	for _, s := range []string{"", "\n", "a", "a\nb", "a\n\nb\n", BOM + "x\ny", BOM, "\n\n\n"} {
		f := NewFile("x", []byte(s))
		for off := -2; off <= len(s)+2; off++ {
			want := 0
			c := f.clamp(off)
			for want < len(f.lines) && f.lines[want] <= c {
				want++
			}
			want = max(want, 1) // inside a leading BOM: line 1
			if got := f.Line(off); got != want {
				t.Errorf("%q: Line(%d) = %d, want %d", s, off, got, want)
			}
		}
		if got := f.LineStarts(); len(got) != f.LineCount() {
			t.Errorf("%q: %d line starts for %d lines", s, len(got), f.LineCount())
		}
	}
}

// TestLongLineColumns: columns on long lines come from checkpoints and
// must equal a walk from the line start, whatever the text (multi-byte
// and 4-byte runes, invalid bytes, runes cut by the offset, CRLF, BOM).
func TestLongLineColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"x", "ab", " = 1; ", "é", "—", "😀", "\xff", "\xe2\x82", "\r\n", "\n", "\uFFFD", "漢字"}
	for round := 0; round < 40; round++ {
		var b strings.Builder
		if round%4 == 0 {
			b.WriteString(BOM)
		}
		n := 500 + rng.IntN(6000)
		for b.Len() < n {
			p := pieces[rng.IntN(len(pieces))]
			if (p == "\n" || p == "\r\n") && rng.IntN(20) != 0 {
				continue // mostly long lines
			}
			b.WriteString(p)
		}
		f := NewFile("t.md", []byte(b.String()))
		for k := 0; k < 400; k++ {
			off := rng.IntN(len(f.Content) + 1)
			line, char := f.LSPPosition(off)
			off = f.clamp(off)
			start := f.lines[line]
			want := 0
			if off >= start {
				want = utf16Len(f.Content[start:off])
			}
			if int(char) != want {
				t.Fatalf("round %d: offset %d (line %d): column %d, want %d", round, off, line, char, want)
			}
		}
	}
}

// BenchmarkLongLinePositions converts a position every 7 bytes of one
// 1 MB line (semantic tokens of a minified chunk) and reports the cost per
// conversion, which must not grow with the column.
func BenchmarkLongLinePositions(b *testing.B) {
	line := strings.Repeat("x = 1; ", 150000)
	f := NewFile("x", []byte("```lua\n"+line+"\n```\n"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 7; off < len(line); off += 7 {
			f.LSPPosition(off)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(line)/7), "ns/position")
}

func TestLSPEncodings(t *testing.T) {
	// Line 0: a U+FEFF the client holds, then "a😀é"; line 1 after a lone CR.
	text := "\uFEFFa😀é\rb"
	type pos struct{ line, char uint32 }
	for _, tc := range []struct {
		enc    Encoding
		client bool
		off    int
		want   pos
	}{
		{UTF16, false, 3, pos{0, 0}}, // a disk file: the BOM is skipped
		{UTF16, true, 3, pos{0, 1}},  // the client's text: U+FEFF is a character
		{UTF16, true, 4, pos{0, 2}},  // after "a"
		{UTF16, true, 8, pos{0, 4}},  // after the astral 😀: two code units
		{UTF8, true, 8, pos{0, 8}},   // bytes
		{UTF32, true, 8, pos{0, 3}},  // code points
		{UTF32, true, 10, pos{0, 4}}, // after é
		{UTF8, true, 11, pos{1, 0}},  // the lone CR ended line 0
		{UTF8, false, 8, pos{0, 5}},  // disk file in UTF-8: the BOM's bytes are skipped
		{UTF16, true, 0, pos{0, 0}},  // inside the U+FEFF's bytes: its start
		{UTF32, true, 12, pos{1, 1}}, // the end
		{UTF16, true, 99, pos{1, 1}}, // clamped
		{UTF8, true, 11 + 1, pos{1, 1}},
	} {
		f := NewFile("t", []byte(text))
		f.UseLSPEncoding(tc.enc, tc.client)
		l, c := f.LSPPosition(tc.off)
		if (pos{l, c}) != tc.want {
			t.Errorf("%s client=%v LSPPosition(%d) = %d:%d, want %d:%d", tc.enc, tc.client, tc.off, l, c, tc.want.line, tc.want.char)
		}
		if tc.off <= len(text) && tc.off != 0 {
			if back := f.LSPOffset(tc.want.line, tc.want.char); back != tc.off {
				t.Errorf("%s client=%v LSPOffset(%d:%d) = %d, want %d", tc.enc, tc.client, tc.want.line, tc.want.char, back, tc.off)
			}
		}
	}
	// A column inside a character rounds down to its start.
	f := NewFile("t", []byte("😀x"))
	f.UseLSPEncoding(UTF8, true)
	if got := f.LSPOffset(0, 2); got != 0 {
		t.Errorf("UTF-8 column inside 😀 = offset %d, want 0", got)
	}
	f.UseLSPEncoding(UTF16, true)
	if got := f.LSPOffset(0, 1); got != 0 {
		t.Errorf("UTF-16 column inside the pair = offset %d, want 0", got)
	}
	for _, s := range []string{"utf-8", "utf-16", "utf-32"} {
		if e, ok := ParseEncoding(s); !ok || e.String() != s {
			t.Errorf("ParseEncoding(%q) = %v, %v", s, e, ok)
		}
	}
	if _, ok := ParseEncoding("latin1"); ok {
		t.Error("ParseEncoding accepted latin1")
	}
}
