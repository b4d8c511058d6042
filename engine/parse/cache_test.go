package parse

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestChunkCacheBounded: the cache keeps at most two generations, each
// limited by entries and by source bytes, and still serves recent chunks.
func TestChunkCacheBounded(t *testing.T) {
	ResetCache()
	defer ResetCache()
	// A tenth of the real budget and chunks a tenth as big: the same
	// evictions for a tenth of the compiling.
	cache.mu.Lock()
	budget := cache.maxBytes
	cache.maxBytes = budget / 10
	cache.mu.Unlock()
	defer func() {
		cache.mu.Lock()
		cache.maxBytes = budget
		cache.mu.Unlock()
	}()
	big := strings.Repeat("local x = 1\n", 2000) // ~24 KB of Lua
	var last *chunkResult
	for i := 0; i < 40; i++ {
		last = compileChunk(fmt.Sprintf("%s-- %d", big, i), "big")
	}
	cache.mu.Lock()
	held := cache.curBytes
	for k := range cache.prev {
		held += cache.weigh(k)
	}
	n := len(cache.cur) + len(cache.prev)
	cache.mu.Unlock()
	if held > 2*cache.maxBytes {
		t.Fatalf("cache holds %d bytes of source in %d entries, budget 2 x %d", held, n, cache.maxBytes)
	}
	// The most recent chunk is still a hit (the same result object), the
	// oldest one was evicted (a new object).
	if compileChunk(fmt.Sprintf("%s-- %d", big, 39), "big") != last {
		t.Fatal("recent chunk not served from the cache")
	}
	if n >= 40 {
		t.Fatalf("%d entries kept; the byte budget should have evicted some", n)
	}
}

// TestCachesOwnTheirKeys: chunk and region entries, including those
// promoted from the previous generation, are stored under keys the caches
// own, never under a substring of a parsed file (which would pin the
// whole text for as long as the entry lives).
func TestCachesOwnTheirKeys(t *testing.T) {
	ResetCache()
	defer ResetCache()
	var b strings.Builder
	b.WriteString("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n[r]: /u\n\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal x = %d\n```\n\nText [r].\n\n", i, i)
	}
	text := []byte(b.String())
	Parse("t.md", text)
	// Move everything to the previous generation, then parse again so
	// that every entry is promoted by a lookup with a substring key.
	cache.mu.Lock()
	cache.prev, cache.cur, cache.curBytes = cache.cur, map[chunkKey]*chunkResult{}, 0
	cache.mu.Unlock()
	regions.mu.Lock()
	regions.prev, regions.cur, regions.curBytes = regions.cur, map[string]*regionScan{}, 0
	regions.mu.Unlock()
	Parse("t.md", text)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if len(cache.cur) < 30 {
		t.Fatalf("%d chunks promoted", len(cache.cur))
	}
	for k, r := range cache.cur {
		if unsafe.StringData(k.source) != unsafe.StringData(r.key.source) {
			t.Fatalf("chunk %q stored under a key the cache does not own", k.label)
		}
	}
	regions.mu.Lock()
	defer regions.mu.Unlock()
	if len(regions.cur) < 30 {
		t.Fatalf("%d regions promoted", len(regions.cur))
	}
	refs := 0
	for k, r := range regions.cur {
		if unsafe.StringData(k) != unsafe.StringData(r.key) {
			t.Fatalf("region %q stored under a key the cache does not own", k)
		}
		for _, ref := range r.refs {
			refs++
			for _, f := range [][]byte{ref.Label(), ref.Destination(), ref.Title()} {
				if len(f) == 0 {
					continue
				}
				p := uintptr(unsafe.Pointer(unsafe.SliceData(f)))
				if start := uintptr(unsafe.Pointer(&text[0])); p >= start && p < start+uintptr(len(text)) {
					t.Fatalf("a cached link reference (%q) points into the parsed text", f)
				}
			}
		}
	}
	if refs == 0 {
		t.Fatal("no cached link reference")
	}
}

// TestLimitCachesOff: with the caches off (LimitCaches(0), as a batch
// check runs), parses store nothing, share nothing, and read the same as
// with the caches on.
func TestLimitCachesOff(t *testing.T) {
	ResetCache()
	defer ResetCache()
	budgets := []*int{&cache.maxBytes, &regions.maxBytes, &templates.maxBytes, &frontmatters.maxBytes}
	saved := make([]int, len(budgets))
	for i, b := range budgets {
		saved[i] = *b
	}
	defer func() {
		for i, b := range budgets {
			*b = saved[i]
		}
	}()
	var b strings.Builder
	b.WriteString("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal x = %d\n```\n\nText {{ args }} %d.\n\n", i, i, i)
	}
	text := []byte(b.String())
	type shape struct {
		sections  int
		src, tmpl string
	}
	read := func(p *Prompt) shape {
		s := p.Sections[7]
		tm, err := s.Blocks[1].Prose.TextTemplate()
		if err != nil || len(tm.Nodes) == 0 {
			t.Fatalf("template of %q: %v, %d nodes", s.Blocks[1].Prose.Text, err, len(tm.Nodes))
		}
		return shape{len(p.Sections), s.Blocks[0].Chunk.Source, fmt.Sprint(len(tm.Nodes))}
	}
	on := read(Parse("t.md", text))
	LimitCaches(0)
	p1, p2 := Parse("t.md", text), Parse("t.md", text)
	if got := read(p1); got != on || strings.TrimSpace(got.src) != "local x = 7" {
		t.Fatalf("uncached parse reads %+v, cached %+v", got, on)
	}
	read(p2)
	c1, c2 := p1.Sections[3].Blocks[0].Chunk, p2.Sections[3].Blocks[0].Chunk
	if c1.Key() == nil || c1.Key() == c2.Key() {
		t.Fatal("two uncached parses share a chunk (or it has no key)")
	}
	for name, n := range map[string]int{"chunks": len(cache.cur) + len(cache.prev), "regions": len(regions.cur) + len(regions.prev), "templates": len(templates.cur) + len(templates.prev), "frontmatters": len(frontmatters.m)} {
		if n != 0 {
			t.Errorf("%d %s cached with the caches off", n, name)
		}
	}
}

// TestFrontmatterMemo: a frontmatter decoded once is served again to a
// parse of a file that starts with the same text, with the spans and
// values a fresh decode gives; one with errors is decoded every time.
func TestFrontmatterMemo(t *testing.T) {
	ResetCache()
	defer ResetCache()
	head := "---\nname: t\ndescription: \"d\"\npromptforge: 1\nmax_tool_iterations: 3\ninput:\n  path: in.txt\n  description: the input\n---\n"
	first := Parse("a.md", []byte(head+"\n# A\n\nHello.\n"))
	if len(first.Errors) != 0 {
		t.Fatalf("errors: %v", first.Errors[0].Message)
	}
	second := Parse("b.md", []byte(head+"\n# B\n\n```lua\nlog(1)\n```\n"))
	if len(second.Frontmatter.Fields) == 0 || &second.Frontmatter.Fields[0] != &first.Frontmatter.Fields[0] {
		t.Error("the second parse decoded the frontmatter again")
	}
	ResetCache()
	fresh := Parse("b.md", []byte(head+"\n# B\n\n```lua\nlog(1)\n```\n"))
	if !reflect.DeepEqual(second.Frontmatter, fresh.Frontmatter) {
		t.Errorf("memoised frontmatter %+v, fresh decode %+v", second.Frontmatter, fresh.Frontmatter)
	}
	// CRLF, and the same text but a key misspelt: no memo applies.
	crlf := Parse("c.md", []byte(strings.ReplaceAll(head, "\n", "\r\n")+"\r\n# C\r\n"))
	if fs := crlf.Frontmatter.Fields; len(fs) < 2 || fs[1].KeySpan.Start != len("---\r\nname: t\r\n") {
		t.Errorf("CRLF frontmatter's second key at %+v", fs)
	}
	bad := strings.Replace(head, "promptforge", "promptforje", 1)
	for i := range 2 {
		p := Parse("d.md", []byte(bad+"\n# D\n"))
		if len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Message, "promptforje") {
			t.Fatalf("parse %d of a misspelt key: errors %v", i, p.Errors)
		}
	}
}
