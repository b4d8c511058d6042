package luatok

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

func TestLex(t *testing.T) {
	src := "local x = \"a\\\"b\" -- c\n" +
		"tools.add({'s', [[long\nstr]]}) --[[ block\ncomment ]] y = 1.5e-3\n"
	toks := Lex(src, 100, 10)
	type want struct {
		k    Kind
		v    string
		line int
	}
	wants := []want{
		{Name, "local", 10}, {Name, "x", 10}, {Op, "=", 10}, {String, `a"b`, 10},
		{Name, "tools", 11}, {Op, ".", 11}, {Name, "add", 11}, {Op, "(", 11}, {Op, "{", 11},
		{String, "s", 11}, {Op, ",", 11}, {String, "long\nstr", 11}, {Op, "}", 12}, {Op, ")", 12},
		{Name, "y", 13}, {Op, "=", 13}, {Number, "1.5e-3", 13},
	}
	if len(toks) != len(wants) {
		t.Fatalf("got %d tokens %+v, want %d", len(toks), toks, len(wants))
	}
	for i, w := range wants {
		g := toks[i]
		if g.Kind != w.k || g.Value != w.v || int(g.Line) != w.line {
			t.Errorf("token %d = %+v, want %+v", i, g, w)
		}
	}
	if s := toks[3].Span; src[s.Start-100:s.End-100] != `"a\"b"` {
		t.Errorf("string span covers %q", src[s.Start-100:s.End-100])
	}
}

func TestTakeInOrder(t *testing.T) {
	src := `x = x + x`
	ix := NewIndex(Lex(src, 0, 1))
	var starts []int
	for i := 0; i < 4; i++ {
		tok, ok := ix.Take(1, Name, "x")
		if !ok {
			t.Fatal("no x")
		}
		starts = append(starts, tok.Span.Start)
	}
	// The fourth lookup falls back to the first occurrence.
	if want := []int{0, 4, 8, 0}; !equal(starts, want) {
		t.Errorf("starts %v, want %v", starts, want)
	}
	if _, ok := ix.Take(1, Name, "y"); ok {
		t.Error("found y")
	}
}

func TestUnterminated(t *testing.T) {
	for _, src := range []string{`"abc`, `[[abc`, `--[[abc`, `'\`, `0x`, "a --"} {
		_ = Lex(src, 0, 1) // must not panic or loop
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTakeLongLine(t *testing.T) {
	src := ""
	for i := 0; i < 100; i++ {
		src += "x = y; "
	}
	ix := NewIndex(Lex(src, 0, 1))
	prev := -1
	for i := 0; i < 100; i++ {
		tok, ok := ix.Take(1, Name, "y")
		if !ok || tok.Span.Start <= prev {
			t.Fatalf("take %d: %+v %v (prev %d)", i, tok, ok, prev)
		}
		prev = tok.Span.Start
	}
	if tok, ok := ix.Take(1, Name, "y"); !ok || tok.Span.Start != 4 {
		t.Errorf("fallback after exhaustion: %+v %v", tok, ok)
	}
	if _, ok := ix.Take(1, Name, "z"); ok {
		t.Error("found z")
	}
}

// TestLexKinds covers the token kinds, operators, comments and strings
// the language server relies on, including half-typed code.
func TestLexKinds(t *testing.T) {
	tests := []struct {
		src  string
		want string // kind:value per token, space separated
	}{
		{`tools.add("a")`, `n:tools p:. n:add p:( s:a p:)`},
		{`x = 'it\'s' -- comment "no"`, `n:x p:= s:it's`},
		{"--[[ long\ncomment ]] y", `n:y`},
		{"s = [==[\nraw ]] text]==]", `n:s p:= s:raw ]] text`},
		{`jump("## Unterminated` + "\nnext", `n:jump p:( s:## Unterminated n:next`},
		{`a..b ... 1.5e+3 0x1F`, `n:a p:.. n:b p:... d:1.5e+3 d:0x1F`},
		{`t["k"]`, `n:t p:[ s:k p:]`},
		{`a // b << c >> d ~= e ~ f :: g`, `n:a p:// n:b p:<< n:c p:>> n:d p:~= n:e p:~ n:f p::: n:g`},
	}
	kinds := map[Kind]string{Name: "n", String: "s", Number: "d", Op: "p"}
	for _, tt := range tests {
		var got []string
		for _, tok := range Lex(tt.src, 0, 1) {
			got = append(got, kinds[tok.Kind]+":"+tok.Value)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("Lex(%q) = %s, want %s", tt.src, g, tt.want)
		}
	}
}

// TestStringSpans: offsets are absolute, a string's inner span excludes
// its delimiters, and an unterminated string is marked and ends at its
// line break (short) or at the end of the source (long).
func TestStringSpans(t *testing.T) {
	toks := Lex(`f("ab")`, 100, 1)
	if s := toks[2]; s.Span != (source.Span{Start: 102, End: 106}) || s.Inner() != (source.Span{Start: 103, End: 105}) || !s.Closed {
		t.Errorf("string token: %+v inner %v", s, s.Inner())
	}
	open := Lex(`f("ab`, 0, 1)[2]
	if open.Closed || open.Inner() != (source.Span{Start: 3, End: 5}) {
		t.Errorf("unterminated string: %+v inner %v", open, open.Inner())
	}
	toks = Lex("f('ab\nx", 0, 1)
	if s := toks[2]; s.Closed || s.Span.End != 5 || s.Value != "ab" || toks[3].Value != "x" {
		t.Errorf("string cut at the line break: %+v", toks)
	}
	long := Lex("s = [==[ab]==] t = [[cd", 0, 1)
	if s := long[2]; !s.Closed || s.Inner() != (source.Span{Start: 8, End: 10}) {
		t.Errorf("long string: %+v inner %v", s, s.Inner())
	}
	if s := long[5]; s.Closed || s.Value != "cd" || s.Inner() != (source.Span{Start: 21, End: 23}) {
		t.Errorf("unterminated long string: %+v inner %v", s, s.Inner())
	}
	if n := Lex("x", 0, 1)[0]; n.Inner() != n.Span {
		t.Errorf("name inner %v", n.Inner())
	}
}

// TestLexCRLF: with CRLF line breaks, offsets and lines stay exact.
func TestLexCRLF(t *testing.T) {
	src := "a = 1\r\nb = 'x'\r\n--[[c\r\n]] d"
	toks := Lex(src, 10, 5)
	for _, tok := range toks {
		if tok.Kind != String && src[tok.Span.Start-10:tok.Span.End-10] != tok.Value {
			t.Errorf("token %+v covers %q", tok, src[tok.Span.Start-10:tok.Span.End-10])
		}
	}
	if last := toks[len(toks)-1]; last.Value != "d" || last.Line != 8 {
		t.Errorf("last token %+v", last)
	}
}

// TestTokenSize: a token packs into 40 bytes on 64-bit machines (the
// field order matters), as every open document keeps its chunks' tokens.
func TestTokenSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && unsafe.Sizeof(Token{}) > 40 {
		t.Fatalf("Token is %d bytes, want at most 40", unsafe.Sizeof(Token{}))
	}
}

// TestStringValues: a short string's value is decoded when it holds an
// escape and is the source between its quotes otherwise (no copy); an
// unterminated one ends at the line.
func TestStringValues(t *testing.T) {
	src := "a = \"plain\" .. 'it''s' .. \"tab\\there\" .. \"q\\\"\" .. \"\" .. 'open\nb = 1"
	var got []string
	var plain string
	for _, tok := range Lex(src, 0, 1) {
		if tok.Kind == String {
			got = append(got, tok.Value)
			if tok.Value == "plain" {
				plain = tok.Value
			}
		}
	}
	want := []string{"plain", "it", "s", "tab\there", "q\"", "", "open"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("string values %q, want %q", got, want)
	}
	if unsafe.StringData(plain) != unsafe.StringData(src[5:]) {
		t.Errorf("the value of \"plain\" is a copy, not the source")
	}
}
