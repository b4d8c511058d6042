package luatok

import "testing"

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
