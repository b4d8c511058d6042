package parse

// An editor parses a new version of a document after each keystroke,
// and usually one chunk and one Markdown region changed. The parse
// caches (cache.go, regions.go) find the others by their text, which
// costs a hash and a comparison of the whole text per chunk and region
// (a quarter of a warm parse of a 10,000-line prompt). Given the
// previous version's parse, a new parse first looks where the text
// should be: at the same offset when it comes before the edit, at the
// same distance from the end when after it, and takes the previous
// result when the text there is the same (one comparison, no hash, no
// lock).

// Reuse is what a parse of a file's next version can take from this
// parse (Prompt.Reuse, ParseAfter): its compiled chunks and Markdown
// region scans, by position. It holds no text of the file and nothing
// the analyses keep on the Prompt.
type Reuse struct {
	size, bodySize int
	// chunkAt are the file offsets of chunks' sources, ascending, and
	// chunks their compiled results.
	chunkAt []int
	chunks  []*chunkResult
	// regionAt are the body offsets of region scans, ascending.
	regionAt []int
	regions  []*regionScan
}

// Reuse returns what a parse of the file's next version can reuse from
// p (see ParseAfter), or nil.
func (p *Prompt) Reuse() *Reuse { return p.reuse }

// ParseAfter is Parse of a new version of a file whose previous
// version's parse gave prev (Prompt.Reuse; nil for none). The result is
// the same as Parse's.
func ParseAfter(prev *Reuse, name string, content []byte) *Prompt {
	return parseWith(prev, name, content)
}

// at returns the index of offset o in the ascending offs, or -1.
func at(offs []int, o int) int {
	lo, hi := 0, len(offs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if offs[m] < o {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(offs) && offs[lo] == o {
		return lo
	}
	return -1
}

// chunk returns the previous parse's result for the chunk labelled label
// with source src at file offset off of the new version, or nil.
func (r *Reuse) chunk(off, size int, label, src string) *chunkResult {
	if r == nil {
		return nil
	}
	d := size - r.size
	for _, o := range [2]int{off, off - d} {
		if i := at(r.chunkAt, o); i >= 0 {
			if c := r.chunks[i]; c.key.source == src && c.key.label == label {
				return c
			}
		}
		if d == 0 {
			break
		}
	}
	return nil
}

// region returns the previous parse's scan of the region text at body
// offset off of the new version, or nil.
func (r *Reuse) region(off, bodySize int, text string) *regionScan {
	if r == nil {
		return nil
	}
	d := bodySize - r.bodySize
	for _, o := range [2]int{off, off - d} {
		if i := at(r.regionAt, o); i >= 0 {
			if s := r.regions[i]; s.key == text {
				return s
			}
		}
		if d == 0 {
			break
		}
	}
	return nil
}

// addChunk records a compiled chunk at file offset off for the next
// version's parse, in file order; total is how many the parse may
// compile (room made at the first).
func (r *Reuse) addChunk(off int, c *chunkResult, total int) {
	if n := len(r.chunkAt); n > 0 && r.chunkAt[n-1] >= off {
		return // the shared library, found before the H1's chunks
	}
	if r.chunkAt == nil {
		r.chunkAt, r.chunks = make([]int, 0, total), make([]*chunkResult, 0, total)
	}
	r.chunkAt = append(r.chunkAt, off)
	r.chunks = append(r.chunks, c)
}
