package template

import (
	"strings"
	"testing"
)

func render(t *Template) string {
	var b strings.Builder
	for _, n := range t.Nodes {
		if n.Kind == Text {
			b.WriteString(n.Text)
		} else {
			b.WriteString("<" + n.Text + ">")
		}
	}
	return b.String()
}

func TestParse(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"a {{ x }} b", "a <x> b", ""},
		{`\{{ x }}`, "{{ x }}", ""},
		{`\}}`, "}}", ""},
		{`\\`, `\`, ""},
		{`a\b\`, `a\b\`, ""},
		{"{ single } and }} stray", "{ single } and }} stray", ""},
		{"{{ var.a\n.b }}", "<var.a\n.b>", ""},
		{"x {{ open", "x {{ open", ErrUnclosed},
		{"{{a}}{{b}}", "<a><b>", ""},
		{"{{ {{ x }} }}", "<{{ x> }}", ""},
	}
	for _, c := range cases {
		tp, err := Parse(c.in, 0)
		if got := render(tp); got != c.want {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
		if (err == nil) != (c.err == "") || (err != nil && err.Kind != c.err) {
			t.Errorf("Parse(%q) err = %v, want %q", c.in, err, c.err)
		}
	}
}

func TestSpans(t *testing.T) {
	text := "ab {{ var.x }} cd"
	tp, _ := Parse(text, 100)
	n := tp.Nodes[1]
	if n.Span.Start != 103 || n.Span.End != 114 || n.PathSpan.Start != 106 || n.PathSpan.End != 111 {
		t.Fatalf("spans %+v", n)
	}
	if n.Segments[1].Name != "x" || n.Segments[1].Span.Start != 110 {
		t.Fatalf("segments %+v", n.Segments)
	}
}

func TestCheck(t *testing.T) {
	cases := map[string]string{
		"args": "", "reply": "", "item": "", "var.a.b": "", "sys.when": "", "name.x": "",
		"var": ErrBadPath, "sys": ErrBadPath, "var.": ErrEmptySegment, "var..x": ErrEmptySegment,
		"var. x": ErrEmptySegment, "": ErrEmptySegment, "args.x": ErrNotATable, "item.key": ErrNotATable, "reply.a": ErrNotATable,
	}
	for path, want := range cases {
		tp, _ := Parse("{{ "+path+" }}", 0)
		err := Check(&tp.Nodes[0])
		if (err == nil) != (want == "") || (err != nil && err.Kind != want) {
			t.Errorf("Check(%q) = %v, want %q", path, err, want)
		}
	}
}

// FuzzParse: never panics; every node's span lies inside the text, and
// literal text plus placeholders reproduce every byte's position order.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a {{ x }} b", `\{{ x }}`, "{{", "}}{{a.b}}", "{{ var..x }}", "\\", "{{\n}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := Parse(s, 7)
		last := 7
		for _, n := range tp.Nodes {
			if n.Span.Start < last || n.Span.End > 7+len(s) || n.Span.End < n.Span.Start {
				t.Fatalf("node span %+v out of order/range (len %d)", n.Span, len(s))
			}
			last = n.Span.End
			if n.Kind == Text {
				src := s[n.Span.Start-7 : n.Span.End-7]
				want := unescapeRef(src)
				if err != nil && n.Span.End == 7+len(s) && n.Span.Start == err.Span.Start {
					want = src // the literal rest after an unclosed {{
				}
				if n.Text != want {
					t.Fatalf("text node %q from %q, want %q", n.Text, src, want)
				}
			}
			if n.Kind == Placeholder {
				if n.PathSpan.Start < n.Span.Start || n.PathSpan.End > n.Span.End {
					t.Fatalf("path span outside node")
				}
				_ = Check(&n)
			}
		}
		if err != nil && (err.Span.Start < 7 || err.Span.End > 7+len(s)) {
			t.Fatalf("error span out of range")
		}
	})
}

// unescapeRef is the reference meaning of a literal: \{, \} and \\ lose
// their backslash, everything else is kept.
func unescapeRef(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("{}\\", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestSpacePadded: spacePadded, which reads a segment's first and last
// runes, answers as trimming the spaces off both ends and comparing
// would: ASCII and Unicode spaces at either end, inside only, invalid
// UTF-8 at the ends, one rune alone.
func TestSpacePadded(t *testing.T) {
	for _, s := range []string{
		"", "a", "ab", "~", "a~", "\x7f", " a", "a ", "a b", "\ta", "a\u3000", "\u3000", "\u0085x", "x\u00a0", "\u2009y",
		"\xff", "a\xff", "\xffa", "\xe3\x80", "a\xe3\x80", "\u3000\xff", "é", "é ", "\u200b",
	} {
		if got, want := spacePadded(s), strings.TrimFunc(s, isSpace) != s; got != want {
			t.Errorf("spacePadded(%q) = %v, trimming says %v", s, got, want)
		}
	}
}
