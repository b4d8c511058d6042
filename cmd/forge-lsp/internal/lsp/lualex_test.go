package lsp

import (
	"strings"
	"testing"
)

func TestLexLua(t *testing.T) {
	tests := []struct {
		src  string
		want string // kind:text per token, space separated
	}{
		{`tools.add("a")`, `n:tools p:. n:add p:( s:a p:)`},
		{`x = 'it\'s' -- comment "no"`, `n:x p:= s:it's`},
		{"--[[ long\ncomment ]] y", `n:y`},
		{"s = [==[\nraw ]] text]==]", `n:s p:= s:raw ]] text`},
		{`jump("## Unterminated` + "\nnext", `n:jump p:( s:## Unterminated n:next`},
		{`a..b ... 1.5e+3 0x1F`, `n:a p:.. n:b p:... d:1.5e+3 d:0x1F`},
		{`t["k"]`, `n:t p:[ s:k p:]`},
	}
	for _, tt := range tests {
		var got []string
		for _, tok := range lexLua([]byte(tt.src), 0) {
			k := map[tokKind]string{tokName: "n", tokString: "s", tokNumber: "d", tokPunct: "p"}[tok.kind]
			got = append(got, k+":"+tok.text)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("lexLua(%q) = %s, want %s", tt.src, g, tt.want)
		}
	}
	// Offsets are absolute and a string's inner span excludes its quotes.
	toks := lexLua([]byte(`f("ab")`), 100)
	if s := toks[2]; s.start != 102 || s.end != 106 || s.innerStart != 103 || s.innerEnd != 105 || !s.closed {
		t.Errorf("string token offsets: %+v", s)
	}
	open := lexLua([]byte(`f("ab`), 0)[2]
	if open.closed || open.innerEnd != 5 {
		t.Errorf("unterminated string: %+v", open)
	}
}
