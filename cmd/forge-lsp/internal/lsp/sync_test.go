package lsp

import (
	"strings"
	"testing"
	"unicode/utf16"

	"go.lsp.dev/protocol"
)

// utf16Apply is a reference for one ranged change: the text as UTF-16
// lines, the range cut out by code units, the new text put in.
func utf16Apply(text string, r protocol.Range, ins string) (string, bool) {
	lines := strings.SplitAfter(text, "\n")
	pos := func(p protocol.Position) (int, bool) {
		off := 0
		if int(p.Line) > len(lines) || int(p.Line) == len(lines) && p.Character > 0 {
			return 0, false
		}
		if int(p.Line) == len(lines) {
			return len(text), true
		}
		for _, l := range lines[:p.Line] {
			off += len(l)
		}
		line := lines[p.Line]
		if strings.HasSuffix(line, "\n") {
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		}
		u := utf16.Encode([]rune(line))
		c := int(p.Character)
		if c > len(u) {
			c = len(u)
		}
		if c > 0 && c < len(u) && utf16.IsSurrogate(rune(u[c-1])) && u[c-1] < 0xDC00 {
			return 0, false // between the halves of a pair
		}
		return off + len(string(utf16.Decode(u[:c]))), true
	}
	a, ok1 := pos(r.Start)
	b, ok2 := pos(r.End)
	if !ok1 || !ok2 || b < a {
		return "", false
	}
	return text[:a] + ins + text[b:], true
}

func TestApplyChanges(t *testing.T) {
	text := "a😀b\nhéllo\r\nend"
	for _, tc := range []struct {
		r    protocol.Range
		ins  string
		want string
		ok   bool
	}{
		{rng(0, 1, 0, 3), "X", "aXb\nhéllo\r\nend", true},   // the pair, two code units
		{rng(0, 2, 0, 3), "X", "", false},                   // splits the pair
		{rng(1, 1, 1, 2), "e", "a😀b\nhello\r\nend", true},   // é is one unit
		{rng(1, 5, 1, 99), "!", "a😀b\nhéllo!\r\nend", true}, // past the end of the line: its end, before CRLF
		{rng(2, 3, 3, 0), "!", "a😀b\nhéllo\r\nend!", true},  // the line after the last is the end
		{rng(5, 0, 5, 0), "x", "", false},                   // past the end
		{rng(1, 3, 1, 1), "x", "", false},                   // inverted
		{rng(0, 0, 2, 0), "", "end", true},                  // across lines
	} {
		got, err := applyChanges([]byte(text), []contentChange{{Range: &tc.r, Text: tc.ins}})
		if (err == nil) != tc.ok || tc.ok && string(got) != tc.want {
			t.Errorf("%v %q: got %q, %v; want %q ok=%v", tc.r, tc.ins, got, err, tc.want, tc.ok)
		}
		if ref, ok := utf16Apply(text, tc.r, tc.ins); ok != tc.ok || ok && ref != tc.want {
			t.Errorf("reference disagrees on %v: %q %v", tc.r, ref, ok)
		}
	}
	// A refused change among several leaves everything unapplied.
	ok := rng(0, 0, 0, 1)
	bad := rng(9, 0, 9, 0)
	if _, err := applyChanges([]byte(text), []contentChange{{Range: &ok, Text: "z"}, {Range: &bad, Text: "z"}}); err == nil || !strings.Contains(err.Error(), "change 2 of 2") {
		t.Errorf("second change out of range: err = %v", err)
	}
}

func rng(l1, c1, l2, c2 uint32) protocol.Range {
	return protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}
}

// FuzzApplyChanges compares a ranged change with the UTF-16 reference on
// any text and any range.
func FuzzApplyChanges(f *testing.F) {
	f.Add("a😀b\nhéllo\r\nend", uint32(0), uint32(1), uint32(1), uint32(2), "X")
	f.Add("", uint32(0), uint32(0), uint32(0), uint32(0), "new")
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 uint32, ins string) {
		text = strings.ToValidUTF8(text, "?")
		ins = strings.ToValidUTF8(ins, "?")
		if strings.HasPrefix(text, "\uFEFF") {
			return // the BOM is not a column; the reference does not model it
		}
		r := rng(l1%8, c1%12, l2%8, c2%12)
		got, err := applyChanges([]byte(text), []contentChange{{Range: &r, Text: ins}})
		want, ok := utf16Apply(text, r, ins)
		if (err == nil) != ok || ok && string(got) != want {
			t.Fatalf("%q %v %q: got %q (%v), reference %q (%v)", text, r, ins, got, err, want, ok)
		}
	})
}
