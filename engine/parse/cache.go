package parse

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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
	// gotoLabel is the first goto or label in the source (see
	// gotoOrLabel), or nil.
	gotoLabel *lua54Finding

	// memo holds facts analyses derive from the chunk (see Chunk.Memo).
	memo memoTable
}

// memoTable is Chunk.Memo's store: a few dozen keys (one per kind of
// fact, one per pass that memoises its findings), read on every analysis
// of every chunk and rarely written. Reads scan a block's published
// entries without locking: first a byte per entry (its key's tag, see
// memoTag), then the one or two entries whose tag matches, so a lookup
// reads a cache line or two of a table that is usually cold (a prompt's
// chunks each have one). A write under the mutex appends a new key in
// place when the block has room, publishing it by the count, and copies
// to a new block otherwise (a replaced key, a full block): a chunk's
// facts cost one or two blocks, not a copy of the table each. It is
// cheaper than a sync.Map for so few keys.
type memoTable struct {
	block atomic.Pointer[memoBlock]
	mu    sync.Mutex
}

// memoBlock holds entries e[:n] and their keys' tags; those are never
// written again.
type memoBlock struct {
	n    atomic.Int32
	tags []uint8
	e    []memoEntry
}

type memoEntry struct{ key, val any }

// firstBlock is a table's first block with its entries inline: one
// object where separate arrays would be three. Every open document keeps
// a table per chunk, and most never need a second block.
type firstBlock struct {
	memoBlock
	e    [firstBlockSize]memoEntry
	tags [firstBlockSize]uint8
}

const firstBlockSize = 8

// newMemoBlock returns an empty block of size entries.
func newMemoBlock(size int) *memoBlock {
	if size == firstBlockSize {
		f := &firstBlock{}
		f.memoBlock.e, f.memoBlock.tags = f.e[:], f.tags[:]
		return &f.memoBlock
	}
	return &memoBlock{e: make([]memoEntry, size), tags: make([]uint8, size)}
}

// memoTag is a byte equal keys share: a key that is a pointer, or of a
// type with no data (the usual struct{} key types), is equal only to a
// key with the same two words (type and data), and its tag hashes both;
// another key's tag comes from its type alone (a string or number boxed
// twice has two data words). A lookup hashes the key's two words without
// asking its type (see load).
func memoTag(key any) uint8 {
	w0, w1 := keyWords(&key)
	if t := reflect.TypeOf(key); t != nil && (t.Kind() == reflect.Pointer || t.Size() == 0) {
		return wordsTag(w0, w1)
	}
	return wordsTag(w0, 0)
}

// wordsTag is the tag of a key's type and data words.
func wordsTag(w0, w1 uintptr) uint8 {
	return uint8(((w0 ^ w1*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd) >> 56)
}

// keyWords returns an interface's type and data words.
func keyWords(k *any) (uintptr, uintptr) {
	w := (*[2]uintptr)(unsafe.Pointer(k))
	return w[0], w[1]
}

// memoHints holds, by tag, the index in its table where load last found
// a key with that tag (a hint, checked before it is used).
var memoHints [256]atomic.Int32

// load looks key up: first the entry with key's very words among those
// whose tag is their hash (every key used as it was stored, with no
// type look-up and no call to compare), then, when none is, an entry
// equal to key by == (a string or number boxed anew). Keys are equal to
// themselves (no NaN).
func (t *memoTable) load(key any) any {
	b := t.block.Load()
	if b == nil {
		return nil
	}
	n := int(b.n.Load())
	w0, w1 := keyWords(&key)
	tag := wordsTag(w0, w1)
	e := b.e[:n]
	// The passes store their keys in much the same order in every
	// chunk's table: where a key with this tag was found last is usually
	// where it is in this table too.
	if i := int(memoHints[tag].Load()); i < n {
		if v0, v1 := keyWords(&e[i].key); v0 == w0 && v1 == w1 {
			return e[i].val
		}
	}
	for i, g := range b.tags[:n] {
		if g == tag {
			if v0, v1 := keyWords(&e[i].key); v0 == w0 && v1 == w1 {
				memoHints[tag].Store(int32(i))
				return e[i].val
			}
		}
	}
	for i := range e {
		if v0, _ := keyWords(&e[i].key); v0 == w0 && e[i].key == key {
			return e[i].val
		}
	}
	return nil
}

func (t *memoTable) store(key, val any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tag := memoTag(key)
	var old []memoEntry
	var oldTags []uint8
	if b := t.block.Load(); b != nil {
		n := b.n.Load()
		old, oldTags = b.e[:n], b.tags[:n]
		if !slices.ContainsFunc(old, func(e memoEntry) bool { return e.key == key }) && int(n) < len(b.e) {
			b.e[n] = memoEntry{key, val}
			b.tags[n] = tag
			b.n.Store(n + 1)
			return
		}
	}
	size := max(firstBlockSize, 2*len(old))
	nb := newMemoBlock(size)
	k := 0
	for i, e := range old {
		if e.key != key {
			nb.e[k], nb.tags[k] = e, oldTags[i]
			k++
		}
	}
	nb.e[k], nb.tags[k] = memoEntry{key, val}, tag
	nb.n.Store(int32(k + 1))
	t.block.Store(nb)
}

// genCache is a two-generation cache: when the current generation is
// full (by entries or by weighed bytes) it becomes the previous one, so
// memory stays bounded while entries in use survive. Lookups may use keys
// that are substrings of a whole file; entries are stored, and promoted
// from the previous generation, under the key their value owns (ownKey),
// so that the cache never pins a file's text.
type genCache[K comparable, V any] struct {
	mu        sync.Mutex
	cur, prev map[K]V
	curBytes  int
	max       int
	maxBytes  int
	weigh     func(K) int
	ownKey    func(V) K
}

func newGenCache[K comparable, V any](max, maxBytes int, weigh func(K) int, ownKey func(V) K) *genCache[K, V] {
	return &genCache[K, V]{cur: map[K]V{}, max: max, maxBytes: maxBytes, weigh: weigh, ownKey: ownKey}
}

func (c *genCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[k]; ok {
		return v, true
	}
	if v, ok := c.prev[k]; ok {
		c.putLocked(c.ownKey(v), v)
		return v, true
	}
	var zero V
	return zero, false
}

// put stores v under its own key.
func (c *genCache[K, V]) put(v V) {
	c.mu.Lock()
	c.putLocked(c.ownKey(v), v)
	c.mu.Unlock()
}

func (c *genCache[K, V]) putLocked(k K, v V) {
	if c.maxBytes == 0 {
		return // off (LimitCaches(0))
	}
	size := c.weigh(k)
	if len(c.cur) >= c.max || c.curBytes+size > c.maxBytes {
		c.prev, c.cur, c.curBytes = c.cur, make(map[K]V, len(c.cur)), 0
	}
	c.cur[k] = v
	c.curBytes += size
}

// drop removes v from the cache, if stored (under its own key).
func (c *genCache[K, V]) drop(v V) {
	k := c.ownKey(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if x, ok := c.cur[k]; ok && any(x) == any(v) {
		delete(c.cur, k)
		c.curBytes -= c.weigh(k)
	}
	if x, ok := c.prev[k]; ok && any(x) == any(v) {
		delete(c.prev, k)
	}
}

// on reports whether entries are stored at all, so that callers skip
// making an owned key for an entry that would be dropped.
func (c *genCache[K, V]) on() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxBytes > 0
}

// limit lowers the weighed budget per generation to at most maxBytes
// (0: store nothing) and drops what no longer fits.
func (c *genCache[K, V]) limit(maxBytes int) {
	c.mu.Lock()
	c.maxBytes = min(c.maxBytes, max(0, maxBytes))
	c.cur, c.prev, c.curBytes = map[K]V{}, nil, 0
	c.mu.Unlock()
}

func (c *genCache[K, V]) reset() {
	c.mu.Lock()
	c.cur, c.prev, c.curBytes = map[K]V{}, nil, 0
	c.mu.Unlock()
}

// entryWeight is a chunk entry's budget cost per byte of source: a parsed
// AST takes about 18 times its source in heap and the analyzer's memoised
// model (Chunk.Memo) about as much again.
const entryWeight = 2

// cache holds compiled chunks. Its budget (1.5 MiB weighed, 768 KiB of
// Lua, per generation: four times a 10,000-line prompt's Lua) bounds it
// near 2 x 768 KiB x 36 = 54 MiB even for a session that edits huge
// chunks.
var cache = newGenCache(8192, 3<<19,
	func(k chunkKey) int { return entryWeight * (len(k.source) + len(k.label)) },
	func(r *chunkResult) chunkKey { return r.key })

// ResetCache drops every memoised chunk, Markdown region and prose
// template (for benchmarks of cold parses).
func ResetCache() {
	cache.reset()
	regions.reset()
	templates.reset()
	frontmatters.reset()
}

// LimitCaches bounds each of the parse caches (compiled chunks, Markdown
// regions, prose templates) to at most maxBytes weighed per generation;
// 0 turns them off. The caches pay off when the same text is parsed
// again, as an editor does after each keystroke; a batch check that
// parses each file once (forge-lsp check) turns them off, so that
// nothing of a file outlives its check and memory follows the files in
// flight rather than the cache budget (about 54 MiB of parsed Lua and
// facts otherwise). Call it before parsing.
func LimitCaches(maxBytes int) {
	cache.limit(maxBytes)
	regions.limit(maxBytes)
	templates.limit(maxBytes)
	frontmatters.limit(maxBytes)
}

func compileChunk(src, label string) *chunkResult {
	if r, ok := cache.get(chunkKey{label, src}); ok {
		return r
	}
	r := &chunkResult{}
	r.stmts, r.err = safeParse(src, label)
	if r.err == nil {
		r.loadLine, r.loadMsg = loadError(r.stmts)
		r.gotoLabel = gotoOrLabel(src)
	}
	if !cache.on() {
		r.key = chunkKey{label, src} // dies with the parse
		return r
	}
	// The key outlives the parse: keep a copy, not a substring that
	// would pin the whole file's text in the cache.
	r.key = chunkKey{strings.Clone(label), strings.Clone(src)}
	cache.put(r)
	return r
}
