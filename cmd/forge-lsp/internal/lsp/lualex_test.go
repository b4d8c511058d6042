package lsp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
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

// TestChunkTokensMatchLex: the memoised, shifted tokens of every chunk
// equal a fresh scan at the chunk's place, after edits that move chunks
// and change one of them, with LF and CRLF line breaks.
func TestChunkTokensMatchLex(t *testing.T) {
	checked := 0
	for _, text := range []string{benchPrompt(1000, 1), benchPrompt(1000, 123), tinyPrompt} {
		for _, variant := range []string{text, strings.ReplaceAll(text, "\n", "\r\n")} {
			p := parse.Parse("t.md", []byte(variant))
			for _, s := range p.Sections {
				for _, b := range s.Blocks {
					c := b.Chunk
					if c == nil {
						continue
					}
					src := p.File.Content[c.SourceSpan.Start:c.SourceSpan.End]
					got := chunkTokens(c, src, c.SourceSpan.Start)
					want := lexLua(src, c.SourceSpan.Start)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("chunk %s: memoised tokens differ from a fresh scan", c.Label)
					}
					checked++
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d chunks checked", checked)
	}
}
