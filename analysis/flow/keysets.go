package flow

import "github.com/forge-lsp/forge-lsp/analysis/program"

// keySets numbers the keys that a prompt's chunks may write (var keys for
// varFlow, store paths for storeFlow) and holds the set each chunk may
// write. The last bit, all, stands for every key: a chunk that writes a
// key it does not name (var as a whole, a store path that is not a known
// string) has it.
type keySets struct {
	keys map[string]int
	all  int
	// chunk holds the keys each chunk may write, by Chunk.Index (nil:
	// none, see of); h1 those of the H1.
	chunk []bitset
	h1    bitset
	// slab is where newSet cuts its sets from: a prompt of many sections
	// needs a few sets per section, each a word or two.
	slab []uint64
}

// keyWrite is a chunk that may write key number key.
type keyWrite struct {
	ch  *program.Chunk
	key int
}

// id numbers key, giving a new key the next number.
func (ks *keySets) id(key string) int {
	if ks.keys == nil {
		ks.keys = map[string]int{}
	}
	k, ok := ks.keys[key]
	if !ok {
		k = len(ks.keys)
		ks.keys[key] = k
	}
	return k
}

// words is the length of a set over the keys numbered so far (all included).
func (ks *keySets) words() int { return (len(ks.keys) + 1 + 63) / 64 }

// newSet is an empty set over the keys.
func (ks *keySets) newSet() bitset {
	w := ks.words()
	if len(ks.slab) < w {
		ks.slab = make([]uint64, max(w*64, 1024))
	}
	b := bitset(ks.slab[:w:w])
	ks.slab = ks.slab[w:]
	return b
}

// fill sets all and each chunk's and the H1's sets from writes (keys
// numbered by id) and wholes (chunks that may write every key). Call it
// once every key is numbered.
func (ks *keySets) fill(prog *program.Program, writes []keyWrite, wholes []*program.Chunk) {
	ks.all = len(ks.keys)
	for _, c := range wholes {
		writes = append(writes, keyWrite{c, ks.all})
	}
	ks.chunk = make([]bitset, len(prog.Chunks))
	for _, w := range writes {
		b := ks.chunk[w.ch.Index()]
		if b == nil {
			b = ks.newSet()
			ks.chunk[w.ch.Index()] = b
		}
		b[w.key/64] |= 1 << (w.key % 64)
	}
	ks.h1 = ks.newSet()
	for _, c := range prog.H1.Chunks {
		if b := ks.of(c); b != nil {
			ks.h1.or(b)
		}
	}
}

// of returns the keys chunk c (of the program fill was given) may
// write; nil when none.
func (ks *keySets) of(c *program.Chunk) bitset {
	if i := c.Index(); i < len(ks.chunk) {
		return ks.chunk[i]
	}
	return nil
}

// may reports whether set b may hold key k (or every key).
func (ks *keySets) may(b bitset, k int) bool { return b.has(k) || b.has(ks.all) }
