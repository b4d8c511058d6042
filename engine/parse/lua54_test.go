package parse

import (
	"strings"
	"testing"
)

// TestLua54Syntax: Lua 5.4-only constructs are named with their place and
// a fix, strings and comments are skipped, and a construct on the error
// line is preferred to an earlier one.
func TestLua54Syntax(t *testing.T) {
	tests := []struct {
		src  string
		near int
		want string // "line:col:len what" or ""
	}{
		{"x = a // b", 0, "1:7:2 the floor division operator `//`"},
		{"x = a << 2\ny = b >> 1", 2, "2:7:2 the bit shift operator `>>`"},
		{"x = a & b", 0, "1:7:1 the bitwise operator `&`"},
		{"x = a | b", 0, "1:7:1 the bitwise operator `|`"},
		{"x = ~a", 0, "1:5:1 the bitwise operator `~`"},
		{"x = a ~= b", 0, ""},
		{"::top::", 0, "1:1:2 a `::label::`"},
		{"local x <const> = 1\ny = 2", 0, "1:9:7 the attribute `<const>`"},
		{"local f <close> = io.open()", 1, "1:9:7 the attribute `<close>`"},
		{"x = 0x1p4", 0, "1:5:5 the hexadecimal float literal `0x1p4`"},
		{"x = 0x1F + 1e5", 0, ""},
		{"goto done", 0, "1:1:4 `goto`"},
		{"gotox = 1", 0, ""},
		{`s = "a // b" -- c // d`, 0, ""},
		{"s = 'it\\'s // no'", 0, ""},
		{"--[[ a // b\n]] x = 1", 0, ""},
		{"s = [==[ a // b ]] ]==] y = a // b", 0, "1:31:2 the floor division operator `//`"},
		{"x = a // b\ny = c & d", 2, "2:7:1 the bitwise operator `&`"},
		{"x = a // b\ny = 1\nz = (", 3, "1:7:2 the floor division operator `//`"},
		{"y = 1\nz = (\nx = a // b", 2, ""},
		{"s = \"unterminated\nx = a // b", 0, "2:7:2 the floor division operator `//`"},
		{"x = 1", 1, ""},
	}
	for _, tt := range tests {
		got := ""
		if f := findLua54(tt.src, tt.near); f != nil {
			got = strings.Join([]string{itoa(f.line), itoa(f.col), itoa(f.len)}, ":") + " " + f.what
			if f.fix == "" {
				t.Errorf("findLua54(%q): no fix", tt.src)
			}
		}
		if got != tt.want {
			t.Errorf("findLua54(%q, %d) = %q, want %q", tt.src, tt.near, got, tt.want)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestLua54Diagnostic: the parser's error for 5.4 syntax names it and the
// fix, at the construct's place.
func TestLua54Diagnostic(t *testing.T) {
	src := "---\npromptforge: 1\nname: t\ndescription: d\n---\n# T\n\n## S\n\n```lua\nlocal x = 1\nlocal y = x // 2\n```\n"
	p := Parse("t.md", []byte(src))
	if len(p.Errors) == 0 {
		t.Fatal("no error for //")
	}
	e := p.Errors[0]
	if !strings.Contains(e.Message, "floor division") || !strings.Contains(e.Message, "math.floor") {
		t.Errorf("message %q", e.Message)
	}
	if got := src[e.Span.Start:e.Span.End]; got != "//" {
		t.Errorf("span covers %q", got)
	}
	p = Parse("t.md", []byte(strings.Replace(src, "local y = x // 2", "goto done\n::done::", 1)))
	if len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Message, "`goto`") {
		t.Errorf("goto: %v", p.Errors)
	}
}
