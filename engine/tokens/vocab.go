package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strconv"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// vocab maps each token's bytes to its rank. It holds the same entries
// as the map github.com/pkoukk/tiktoken-go-loader builds from the same
// embedded file, but in a few slices without pointers: the vocabulary
// stays live for the whole process, and a map of some 100,000 strings
// would be marked again by every garbage collection.
type vocab struct {
	seed maphash.Seed
	// data holds every token's bytes one after another; token i is
	// data[starts[i]:starts[i+1]] and has rank ranks[i].
	data   []byte
	starts []uint32
	ranks  []uint32
	// slots is an open-addressing hash table with linear probing: a slot
	// holds the high 32 bits of its token's hash (compared before the
	// bytes are) above the token's index plus one; 0 is an empty slot.
	slots []uint64
	mask  uint64
}

// loadVocab parses the loader's embedded file name: one token a line,
// its bytes in standard base64, a space and its rank (the format the
// loader's LoadTiktokenBpe reads).
func loadVocab(name string) (*vocab, error) {
	contents, err := assets.Assets.ReadFile(name)
	if err != nil {
		return nil, err
	}
	n := bytes.Count(contents, []byte{'\n'}) + 1
	v := &vocab{
		seed:   maphash.MakeSeed(),
		data:   make([]byte, 0, base64.StdEncoding.DecodedLen(len(contents))/2),
		starts: make([]uint32, 1, n+1),
		ranks:  make([]uint32, 0, n),
	}
	size := 1 << bits.Len(uint(2*n)) // load factor at most 1/2
	v.slots = make([]uint64, size)
	v.mask = uint64(size - 1)
	for len(contents) > 0 {
		line := contents
		if i := bytes.IndexByte(contents, '\n'); i >= 0 {
			line, contents = contents[:i], contents[i+1:]
		} else {
			contents = nil
		}
		if len(line) == 0 {
			continue
		}
		tok, rest, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("%s: no rank in line %q", name, line)
		}
		if i := bytes.IndexByte(rest, ' '); i >= 0 {
			rest = rest[:i]
		}
		rank, err := strconv.Atoi(string(rest))
		if err != nil {
			return nil, err
		}
		if rank < 0 || rank > math.MaxUint32 {
			return nil, fmt.Errorf("%s: rank %d out of range", name, rank)
		}
		start := len(v.data)
		v.data, err = base64.StdEncoding.AppendDecode(v.data, tok)
		if err != nil {
			return nil, err
		}
		if len(v.data) > math.MaxUint32 {
			return nil, fmt.Errorf("%s: too large", name)
		}
		v.add(start, uint32(rank))
	}
	if cap(v.data)-len(v.data) > len(v.data)/8 {
		v.data = append([]byte(nil), v.data...)
	}
	return v, nil
}

// add makes data[start:] a token of the given rank. A token listed twice
// keeps its last rank and its first bytes, as a map would.
func (v *vocab) add(start int, rank uint32) {
	key := v.data[start:]
	h := maphash.Bytes(v.seed, key)
	tag := h >> 32 << 32
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		e := v.slots[i]
		if e == 0 {
			v.slots[i] = tag | uint64(len(v.ranks)+1)
			v.ranks = append(v.ranks, rank)
			v.starts = append(v.starts, uint32(len(v.data)))
			return
		}
		if e&^math.MaxUint32 == tag {
			if k := uint32(e) - 1; bytes.Equal(v.data[v.starts[k]:v.starts[k+1]], key) {
				v.ranks[k] = rank
				v.data = v.data[:start]
				return
			}
		}
	}
}

// rank returns the rank of the token s and whether s is a token.
func (v *vocab) rank(s string) (int, bool) {
	h := maphash.String(v.seed, s)
	tag := h >> 32 << 32
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		e := v.slots[i]
		if e == 0 {
			return 0, false
		}
		if e&^math.MaxUint32 == tag {
			if k := uint32(e) - 1; string(v.data[v.starts[k]:v.starts[k+1]]) == s {
				return int(v.ranks[k]), true
			}
		}
	}
}

// len returns the number of tokens.
func (v *vocab) len() int { return len(v.ranks) }
