package run

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestCompileLinesCached: an instrumented chunk is compiled once per chunk
// text and set of chunk lines, wherever the chunk stands in its file.
func TestCompileLinesCached(t *testing.T) {
	const hdr = "---\nname: c\ndescription: d\npromptforge: 1\n---\n\n# C\n\n"
	const fence = "```lua\nlocal a = 1\nlocal b = 2\nreturn tostring(a + b)\n```\n"
	chunk := func(src string) *parse.Chunk {
		t.Helper()
		p := parse.Parse("c.md", []byte(src))
		for _, b := range p.H1Blocks {
			if b.Chunk != nil && len(p.Errors) == 0 {
				return b.Chunk
			}
		}
		t.Fatalf("no Lua block: %v", p.Errors)
		return nil
	}
	c1 := chunk(hdr + fence)
	c2 := chunk(hdr + "Some prose first.\n\nAnd more.\n\n" + fence)
	if c1.FirstLine == c2.FirstLine {
		t.Fatal("the two chunks must stand on different lines")
	}
	p1, err := compileLines(c1, []int{c1.FirstLine + 1})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := compileLines(c2, []int{c2.FirstLine + 1})
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Error("the same chunk text and chunk line compiled twice")
	}
	p3, err := compileLines(c2, []int{c2.FirstLine})
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p2 {
		t.Error("another chunk line got the cached proto")
	}
	// Same file lines, another chunk line: must not share.
	p4, err := compileLines(c2, []int{c1.FirstLine + 1})
	if err != nil {
		t.Fatal(err)
	}
	if p4 == p1 {
		t.Error("the cache is keyed on file lines, not chunk lines")
	}
}
