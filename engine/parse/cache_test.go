package parse

import (
	"fmt"
	"strings"
	"testing"
)

// TestChunkCacheBounded: the cache keeps at most two generations, each
// limited by entries and by source bytes, and still serves recent chunks.
func TestChunkCacheBounded(t *testing.T) {
	ResetCache()
	defer ResetCache()
	big := strings.Repeat("local x = 1\n", 20000) // ~240 KB of Lua
	var last *chunkResult
	for i := 0; i < 40; i++ {
		last = compileChunk(fmt.Sprintf("%s-- %d", big, i), "big")
	}
	cache.mu.Lock()
	held := cache.curBytes
	for k := range cache.prev {
		held += len(k.source)
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
