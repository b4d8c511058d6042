package run

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestCompileMemoised: a chunk is compiled once per text, whichever parse
// of the prompt asks; a chunk that did not parse gets an error, not a
// proto.
func TestCompileMemoised(t *testing.T) {
	src := []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## S\n\n```lua\nlocal function f(...) return ... end\nreturn f(1)\n```\n")
	c := parse.Parse("t.md", src).Sections[0].Blocks[0].Chunk
	proto, err := compileChunk(c)
	if err != nil || proto == nil || proto.SourceName != c.Name {
		t.Fatalf("compileChunk: %v %v", proto, err)
	}
	again, _ := compileChunk(parse.Parse("t.md", src).Sections[0].Blocks[0].Chunk)
	if again != proto {
		t.Fatal("a second parse of the same chunk compiled it again")
	}
	bad := parse.Parse("t.md", []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## S\n\n```lua\nlocal = 1\n```\n")).Sections[0].Blocks[0].Chunk
	if p, err := compileChunk(bad); p != nil || err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("compileChunk of a broken chunk: %v %v", p, err)
	}
}
