package parse

import (
	"testing"
	"unsafe"
)

// TestChunkSourceOwnedByCache: a parsed chunk's Source is the parser
// cache's copy of its text, shared by every parse of the same chunk, not
// a substring of one parse's file, so what analyses memoise on the chunk
// (tokens whose values point into Source) never pins a file's text.
func TestChunkSourceOwnedByCache(t *testing.T) {
	src := "# T\n\n## S\n\n```lua\nlocal owned = \"by the cache\"\nreturn owned\n```\n"
	a := mustParse(t, src).Sections[0].Blocks[0].Chunk
	b := mustParse(t, "# Other\n\nProse.\n\n"+src[len("# T\n\n"):]).Sections[0].Blocks[0].Chunk
	if a.Key() == nil || a.Key() != b.Key() {
		t.Fatal("the two parses do not share the chunk")
	}
	if a.Source != "local owned = \"by the cache\"\nreturn owned" {
		t.Fatalf("Source = %q", a.Source)
	}
	if unsafe.StringData(a.Source) != unsafe.StringData(b.Source) {
		t.Fatal("two parses of the same chunk hold different copies of its text: Source points into each parse's file")
	}
}
