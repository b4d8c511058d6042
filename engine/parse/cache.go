package parse

import (
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Compiling Lua dominates parse time (gopher-lua's parser and compiler
// allocate heavily). An editor re-parses the whole file on every
// keystroke while usually only one chunk changed, so compiled chunks are
// memoised by (label, source), as gopls memoises parsed files by content.
// Cached ASTs and protos are shared and must be treated as immutable.

type chunkKey struct{ label, source string }

type chunkResult struct {
	key   chunkKey // the cache key, owned (not a substring of a file)
	stmts []ast.Stmt
	err   error // parse error (*luaparse.Error or other)
	// loadLine/loadMsg is the first load-time error found on the AST.
	loadLine int
	loadMsg  string

	// The bytecode is compiled on first use: compiling costs more than
	// parsing, and the editor and the checker never need it.
	once  sync.Once
	proto *lua.FunctionProto
	cerr  error

	// memo holds facts analyses derive from the chunk (see Chunk.Memo).
	memo sync.Map
}

func (r *chunkResult) compile(name string) (*lua.FunctionProto, error) {
	r.once.Do(func() {
		r.proto, r.cerr = safeCompile(r.stmts, name)
	})
	return r.proto, r.cerr
}

// chunkCache is a two-generation cache: when the current generation is
// full (by entries or by weighed source bytes) it becomes the previous
// one, so memory stays bounded while entries in use survive. A parsed AST
// takes about 18 times its source in heap and the analyzer's memoised
// model (Chunk.Memo) about as much again, so an entry weighs twice its
// source and the budget (1.5 MiB weighed, 768 KiB of Lua, per
// generation: four times a 10,000-line prompt's Lua) bounds the cache
// near 2 x 768 KiB x 36 = 54 MiB even for a session that edits huge
// chunks.
type chunkCache struct {
	mu        sync.Mutex
	cur, prev map[chunkKey]*chunkResult
	curBytes  int
	max       int
	maxBytes  int
}

// entryWeight is an entry's budget cost per byte of source: the AST and
// the memoised analysis facts.
const entryWeight = 2

var cache = &chunkCache{cur: map[chunkKey]*chunkResult{}, max: 8192, maxBytes: 3 << 19}

func (c *chunkCache) get(k chunkKey) *chunkResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.cur[k]; ok {
		return r
	}
	if r, ok := c.prev[k]; ok {
		// Promote under the stored key: k may be a substring of a whole
		// file, which must not be pinned by the cache.
		c.putLocked(r.key, r)
		return r
	}
	return nil
}

func (c *chunkCache) put(k chunkKey, r *chunkResult) {
	c.mu.Lock()
	c.putLocked(k, r)
	c.mu.Unlock()
}

func (c *chunkCache) putLocked(k chunkKey, r *chunkResult) {
	size := entryWeight * (len(k.source) + len(k.label))
	if len(c.cur) >= c.max || c.curBytes+size > c.maxBytes {
		c.prev, c.cur, c.curBytes = c.cur, make(map[chunkKey]*chunkResult, len(c.cur)), 0
	}
	c.cur[k] = r
	c.curBytes += size
}

// ResetCache drops every memoised chunk and Markdown region (for
// benchmarks of cold parses).
func ResetCache() {
	cache.mu.Lock()
	cache.cur, cache.prev, cache.curBytes = map[chunkKey]*chunkResult{}, nil, 0
	cache.mu.Unlock()
	resetRegions()
}

func compileChunk(src, label string) *chunkResult {
	k := chunkKey{label, src}
	if r := cache.get(k); r != nil {
		return r
	}
	r := &chunkResult{}
	r.stmts, r.err = safeParse(src, label)
	if r.err == nil {
		r.loadLine, r.loadMsg = loadError(r.stmts)
	}
	// The key outlives the parse: keep a copy, not a substring that
	// would pin the whole file's text in the cache.
	r.key = chunkKey{strings.Clone(label), strings.Clone(src)}
	cache.put(r.key, r)
	return r
}
