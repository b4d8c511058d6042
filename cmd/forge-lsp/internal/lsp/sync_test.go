package lsp

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/source"

	"go.lsp.dev/protocol"
)

// refApply is a reference for one ranged change: the text as lines (LF,
// CRLF and a lone CR end one, as LSP says; a leading U+FEFF is a
// character), the range cut out by units of enc, the new text put in.
func refApply(text string, r protocol.Range, ins string, enc source.Encoding) (string, bool) {
	lines := regexp.MustCompile(`[^\r\n]*(\r\n|\r|\n)|[^\r\n]+$`).FindAllString(text, -1)
	if text == "" || strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\r") {
		lines = append(lines, "") // the empty last line
	}
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
		line := strings.TrimRight(lines[p.Line], "\r\n")
		var units []string // each unit, holding its character's bytes at the character's last unit
		for _, c := range line {
			n := map[source.Encoding]int{source.UTF8: utf8.RuneLen(c), source.UTF16: utf16.RuneLen(c), source.UTF32: 1}[enc]
			if c == utf8.RuneError || n < 0 {
				n = 1
			}
			for range n - 1 {
				units = append(units, "")
			}
			units = append(units, string(c))
		}
		c := min(int(p.Character), len(units))
		if c > 0 && c < len(units) && units[c-1] == "" {
			return 0, false // inside a character
		}
		return off + len(strings.Join(units[:c], "")), true
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
		got, err := applyChanges([]byte(text), []contentChange{{Range: &tc.r, Text: tc.ins}}, source.UTF16)
		if (err == nil) != tc.ok || tc.ok && string(got) != tc.want {
			t.Errorf("%v %q: got %q, %v; want %q ok=%v", tc.r, tc.ins, got, err, tc.want, tc.ok)
		}
		if ref, ok := refApply(text, tc.r, tc.ins, source.UTF16); ok != tc.ok || ok && ref != tc.want {
			t.Errorf("reference disagrees on %v: %q %v", tc.r, ref, ok)
		}
	}
	// A refused change among several leaves everything unapplied.
	ok := rng(0, 0, 0, 1)
	bad := rng(9, 0, 9, 0)
	if _, err := applyChanges([]byte(text), []contentChange{{Range: &ok, Text: "z"}, {Range: &bad, Text: "z"}}, source.UTF16); err == nil || !strings.Contains(err.Error(), "change 2 of 2") {
		t.Errorf("second change out of range: err = %v", err)
	}
}

// A U+FEFF the user typed at 0:0 is a character of the client's text, and
// a lone CR ends a line: later edits land where the client put them.
func TestApplyChangesBOMAndCR(t *testing.T) {
	for _, tc := range []struct {
		text string
		r    protocol.Range
		ins  string
		enc  source.Encoding
		want string
	}{
		{"\uFEFFab", rng(0, 1, 0, 2), "X", source.UTF16, "\uFEFFXb"},
		{"\uFEFFab", rng(0, 3, 0, 4), "X", source.UTF8, "\uFEFFXb"},
		{"\uFEFFab", rng(0, 1, 0, 2), "X", source.UTF32, "\uFEFFXb"},
		{"a\rb\rc", rng(1, 0, 1, 1), "X", source.UTF16, "a\rX\rc"},
		{"a\rb\r\nc", rng(2, 0, 2, 1), "X", source.UTF16, "a\rb\r\nX"},
		{"a\r", rng(1, 0, 1, 0), "X", source.UTF16, "a\rX"},
		{"😀é\nx", rng(0, 4, 0, 6), "e", source.UTF8, "😀e\nx"},
		{"😀é\nx", rng(0, 1, 0, 2), "e", source.UTF32, "😀e\nx"},
	} {
		got, err := applyChanges([]byte(tc.text), []contentChange{{Range: &tc.r, Text: tc.ins}}, tc.enc)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %q %v: got %q, %v; want %q", tc.enc, tc.text, tc.r, got, err, tc.want)
		}
	}
	// Inside a UTF-8 sequence is refused like a split surrogate pair.
	r := rng(0, 1, 0, 2)
	if _, err := applyChanges([]byte("é"), []contentChange{{Range: &r}}, source.UTF8); err == nil || !strings.Contains(err.Error(), "splits a character") {
		t.Errorf("mid-sequence UTF-8 column: %v", err)
	}
}

func rng(l1, c1, l2, c2 uint32) protocol.Range {
	return protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}
}

// FuzzApplyChanges compares a ranged change with the reference on any
// text, any range and every position encoding.
func FuzzApplyChanges(f *testing.F) {
	f.Add("a😀b\nhéllo\r\nend", uint32(0), uint32(1), uint32(1), uint32(2), "X")
	f.Add("", uint32(0), uint32(0), uint32(0), uint32(0), "new")
	f.Add("\uFEFFab\rc\r\nd", uint32(0), uint32(1), uint32(1), uint32(1), "X")
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 uint32, ins string) {
		text = strings.ToValidUTF8(text, "?")
		ins = strings.ToValidUTF8(ins, "?")
		r := rng(l1%8, c1%12, l2%8, c2%12)
		for _, enc := range []source.Encoding{source.UTF16, source.UTF8, source.UTF32} {
			got, err := applyChanges([]byte(text), []contentChange{{Range: &r, Text: ins}}, enc)
			want, ok := refApply(text, r, ins, enc)
			if (err == nil) != ok || ok && string(got) != want {
				t.Fatalf("%s %q %v %q: got %q (%v), reference %q (%v)", enc, text, r, ins, got, err, want, ok)
			}
		}
	})
}

func TestNegotiateEncoding(t *testing.T) {
	for _, tc := range []struct {
		offer []string
		want  source.Encoding
	}{
		{nil, source.UTF16},
		{[]string{"utf-16"}, source.UTF16},
		{[]string{"utf-32", "utf-16"}, source.UTF16}, // UTF-32 is not chosen
		{[]string{"utf-16", "utf-8"}, source.UTF8},   // UTF-8 whenever offered
		{[]string{"utf-8"}, source.UTF8},
		{[]string{"latin1"}, source.UTF16},
	} {
		if got := negotiateEncoding(tc.offer); got != tc.want {
			t.Errorf("negotiateEncoding(%q) = %s, want %s", tc.offer, got, tc.want)
		}
	}
}

// TestApplyIndexedSequence types a long random sequence of ranged changes
// into one document, keeping the line index between them as didChange
// does, and compares every version with the reference applied to the
// text alone; a failing multi-change leaves text and index as they were.
func TestApplyIndexedSequence(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"x", "\n", "\r\n", "\r", "😀", "é", "local a = 1\n"}
	randText := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for _, enc := range []source.Encoding{source.UTF16, source.UTF8, source.UTF32} {
		text := randText(40)
		buf := []byte(text)
		lines := source.NewLines(buf)
		for step := range 3000 {
			lc := uint32(strings.Count(text, "\n") + strings.Count(text, "\r") + 1)
			rg := rng(uint32(r.IntN(int(lc))), uint32(r.IntN(6)), uint32(r.IntN(int(lc))), uint32(r.IntN(6)))
			if rg.End.Line < rg.Start.Line || rg.End.Line == rg.Start.Line && rg.End.Character < rg.Start.Character {
				rg.Start, rg.End = rg.End, rg.Start
			}
			ins := randText(r.IntN(3))
			want, ok := refApply(text, rg, ins, enc)
			got, next, _, err := applyLogged(buf, lines, []contentChange{{Range: &rg, Text: ins}}, enc)
			if (err == nil) != ok || ok && string(got) != want {
				t.Fatalf("%s step %d: %q %v %q: got %q (%v), reference %q (%v)", enc, step, text, rg, ins, got, err, want, ok)
			}
			if !ok {
				continue
			}
			text, buf, lines = want, got, next
			if fresh := source.NewLines(buf); fresh.Count() != lines.Count() {
				t.Fatalf("%s step %d: kept index has %d lines, the text %d", enc, step, lines.Count(), fresh.Count())
			}
		}
		// A two-change event whose second range is out of the document.
		good, bad := rng(0, 0, 0, 0), rng(1<<20, 0, 1<<20, 0)
		before := lines.Count()
		if _, _, _, err := applyLogged(buf, lines, []contentChange{{Range: &good, Text: "\n\n\n"}, {Range: &bad, Text: "z"}}, enc); err == nil {
			t.Fatalf("%s: out-of-range second change applied", enc)
		}
		if lines.Count() != before {
			t.Fatalf("%s: failed change left the index at %d lines, was %d", enc, lines.Count(), before)
		}
	}
}

// TestNotificationParamsNotProbed: a notification's params are decoded
// once, by its handler; only a document request's are probed for the
// URI before (a full-text didChange of a large prompt was decoded a
// second time for nothing).
func TestNotificationParamsNotProbed(t *testing.T) {
	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	uri := "file:///probe/a.md"
	c.open(uri, tinyPrompt)
	_, idx := c.diagnosticsFor(uri, 1, 0)
	before := uriProbes.Load()
	c.change(uri, 2, brokenPrompt)
	c.diagnosticsFor(uri, 2, idx+1)
	if n := uriProbes.Load() - before; n != 0 {
		t.Errorf("didChange's params were probed for a URI %d times", n)
	}
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
	if n := uriProbes.Load() - before; n != 1 {
		t.Errorf("documentSymbol's params were probed %d times, want once", n)
	}
}
