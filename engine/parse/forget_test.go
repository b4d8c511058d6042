package parse

import (
	"fmt"
	"strings"
	"testing"
)

// TestForgetDropsReplacedOnly: after an edit of one chunk, Forget drops
// the chunk it replaced (and the replaced Markdown region) from the
// caches and keeps every chunk the new parse still uses, so a chunk
// typed over many edits leaves one entry, not one per edit.
func TestForgetDropsReplacedOnly(t *testing.T) {
	ResetCache()
	t.Cleanup(ResetCache)
	version := func(n int) []byte {
		var b strings.Builder
		b.WriteString("---\nname: f\ndescription: d\npromptforge: 1\n---\n\n# F\n\n")
		for i := range 6 {
			v := 0
			if i == 3 {
				v = n
			}
			fmt.Fprintf(&b, "## S%d\n\nText %d of %d.\n\n```lua\nlocal x = %d\nvar.k%d = x\n```\n\n", i, i, v, v, i)
		}
		return []byte(b.String())
	}
	cached := func(src string) bool {
		for k := range cache.cur {
			if strings.Contains(k.source, src) {
				return true
			}
		}
		for k := range cache.prev {
			if strings.Contains(k.source, src) {
				return true
			}
		}
		return false
	}
	p := Parse("f.md", version(1))
	if len(p.Errors) > 0 {
		t.Fatal(p.Errors[0].Message)
	}
	entries := len(cache.cur) + len(cache.prev)
	regionEntries := len(regions.cur) + len(regions.prev)
	for n := 2; n <= 20; n++ {
		q := ParseAfter(p.Reuse(), "f.md", version(n))
		Forget(p.Reuse(), q.Reuse())
		p = q
	}
	if cached("local x = 19\n") {
		t.Error("a replaced chunk is still cached")
	}
	for _, src := range []string{"local x = 20\n", "local x = 0\nvar.k0", "local x = 0\nvar.k5"} {
		if !cached(src) {
			t.Errorf("chunk %q, which the last parse uses, was dropped", src)
		}
	}
	if n := len(cache.cur) + len(cache.prev); n != entries {
		t.Errorf("%d chunks cached after 19 edits of one chunk, %d after the first parse", n, entries)
	}
	if n := len(regions.cur) + len(regions.prev); n != regionEntries {
		t.Errorf("%d regions cached after 19 edits of one region, %d after the first parse", n, regionEntries)
	}
	// A parse that shares nothing with the old one drops all of it.
	q := Parse("g.md", []byte("---\nname: g\ndescription: d\npromptforge: 1\n---\n\n# G\n\n```lua\nlocal y = 1\n```\n"))
	Forget(p.Reuse(), q.Reuse())
	if cached("local x = 20\n") {
		t.Error("the old parse's chunks are still cached after a parse that shares none")
	}
}
