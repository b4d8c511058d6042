package parse

import (
	"slices"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

// An editor parses a new version of a document after each keystroke,
// and usually one chunk and one Markdown region changed. The parse
// caches (cache.go, regions.go) find the others by their text, which
// costs a hash and a comparison of the whole text per chunk and region
// (a quarter of a warm parse of a 10,000-line prompt). Given the
// previous version's parse, a new parse first looks where the text
// should be: at the same offset when it comes before the edit, at the
// same distance from the end when after it, and takes the previous
// result when the text there is the same (one comparison, no hash, no
// lock). When the caller knows which bytes the edit changed (ParseEdited:
// a language server applies the client's ranged edits itself), the text
// before and after them is taken without even that comparison.

// Reuse is what a parse of a file's next version can take from this
// parse (Prompt.Reuse, ParseAfter): its compiled chunks and Markdown
// region scans, by position, and for ParseEdited its sections (whose
// blocks are copied, reusesection.go). Through the sections it keeps the
// parse's Prompt alive.
type Reuse struct {
	size, bodySize int
	// bodyStart is the file offset of the body.
	bodyStart int
	// chunkAt are the file offsets of chunks' sources, ascending, and
	// chunks their compiled results.
	chunkAt []int
	chunks  []*chunkResult
	// regionAt are the body offsets of region scans, ascending.
	regionAt []int
	regions  []*regionScan
	// lines is the file's line count; breaks and luaOpen the body
	// offsets of its thematic breaks and ```lua openers.
	lines           int
	breaks, luaOpen []int
	// secAt are the body offsets of sections' contents, ascending, and
	// secs the sections (reusesection.go).
	secAt []int
	secs  []sectionRecord
	// blocks is how many blocks the sections have.
	blocks int
	// cuts are the body offsets of the lines that start an ATX heading
	// at column 0 (scanRegions), when cutsOK.
	cuts   []int
	cutsOK bool
	// deep is how many body lines were too deeply nested (capNesting).
	deep int
	// starts are the file's line starts (source.File.LineStarts).
	starts []int
	// lineage and version are the parse's (Prompt.Lineage).
	lineage *Lineage
	version uint64
}

// Reuse returns what a parse of the file's next version can reuse from
// p (see ParseAfter), or nil.
func (p *Prompt) Reuse() *Reuse { return p.reuse }

// ParseAfter is Parse of a new version of a file whose previous
// version's parse gave prev (Prompt.Reuse; nil for none). The result is
// the same as Parse's.
func ParseAfter(prev *Reuse, name string, content []byte) *Prompt {
	return parseWith(prev, nil, source.NewFile(name, content))
}

// Change tells ParseEdited which bytes of a file's new version may
// differ from the version its Reuse was made from: the first Before
// bytes of the new version are the previous version's first Before
// bytes, and its last After bytes are the previous version's last After
// bytes. Any smaller Before and After are also true (zero for both: all
// may differ).
type Change struct{ Before, After int }

// ParseEdited is ParseAfter for a new version that differs from prev's
// only as ch says: a chunk or Markdown region inside the unchanged text
// is taken from prev by its position, without comparing its text. ch
// must be true of the two versions (the result is then the same as
// Parse's); a ch that claims more than is true gives a wrong parse.
func ParseEdited(prev *Reuse, ch Change, name string, content []byte) *Prompt {
	return ParseFile(prev, &ch, editedFile(prev, ch, name, content))
}

// editedFile is source.NewFile for a new version that differs from
// prev's only as ch says: its line starts are prev's moved by the edit,
// with only the edited bytes scanned (editedStarts).
func editedFile(prev *Reuse, ch Change, name string, content []byte) *source.File {
	if starts := editedStarts(prev, ch, content); starts != nil {
		return source.NewFileLines(name, content, starts)
	}
	return source.NewFile(name, content)
}

// editedStarts returns the line starts of content (as source.Lines
// counts them), which differs from prev's version only as ch says, or
// nil when prev cannot tell them.
func editedStarts(prev *Reuse, ch Change, content []byte) []int {
	size := len(content)
	if prev == nil || len(prev.starts) == 0 || prev.starts[0] != 0 || ch.Before < 0 || ch.After < 0 ||
		ch.Before > min(size, prev.size) || ch.After > min(size, prev.size) {
		return nil
	}
	// The bytes [Before, prev.size-after) were replaced by [Before,
	// size-after) (after no more than leaves both in place).
	after := min(ch.After, size-ch.Before, prev.size-ch.Before)
	l := source.LinesOf(prev.starts, prev.size)
	l.Edit(content, ch.Before, prev.size-after, size-after-ch.Before)
	return l.Starts()
}

// ParseFile is ParseEdited (ch not nil) or ParseAfter (ch nil) of a
// file already indexed: a language server that keeps each document's
// line index makes it with source.NewFileLines instead of a scan of
// every line.
func ParseFile(prev *Reuse, ch *Change, f *source.File) *Prompt {
	size := len(f.Content)
	if prev == nil || ch == nil || ch.Before < 0 || ch.After < 0 || ch.Before > min(size, prev.size) || ch.After > min(size, prev.size) {
		return parseWith(prev, nil, f)
	}
	return parseWith(prev, ch, f)
}

// same is what the parser knows of the bytes an edit left alone, in file
// and body offsets of the new version (see Change).
type same struct {
	// fileBefore, fileAfter: file bytes [0, fileBefore) are the previous
	// version's at the same offsets, and [fileAfter, size) are the
	// previous version's at the same distance from its end.
	fileBefore, fileAfter int
	// bodyBefore, bodyAfter are the same for the body, which is built
	// from the file's lines (fileBefore and fileAfter rounded to lines).
	bodyBefore, bodyAfter int
}

// unchanged works out ps.same for the change ch between prev's version
// and the one being parsed, once the body is built. The body is the
// file's lines after the frontmatter, each line break made one LF, and a
// line break is read with the byte after it (CRLF, a lone CR): so the
// body's unchanged parts are whole lines whose bytes and the byte after
// them are unchanged.
func (ps *parser) unchanged(ch *Change) {
	size := len(ps.file.Content)
	s := &same{fileBefore: ch.Before, fileAfter: size - ch.After, bodyAfter: len(ps.body)}
	if lastSame := ch.Before - 2; ps.prev.bodyStart == ps.prompt.BodyStart && lastSame >= ps.prompt.BodyStart {
		// The body lines before the one holding the last unchanged byte
		// but one.
		if k := ps.file.Line(lastSame) - ps.fmLines - 1; k >= 0 {
			s.bodyBefore = ps.bodyLines.at(min(k, ps.bodyLines.len()-1))
		}
	}
	if firstSame := s.fileAfter + 2; firstSame <= size {
		// The body lines from the first that starts at or after the first
		// unchanged byte but one (1-based file line l).
		l := ps.file.Line(firstSame)
		if ps.file.LineStart(l) < firstSame {
			l++
		}
		switch k := l - ps.fmLines - 1; {
		case k < 0:
			s.bodyAfter = 0 // the whole body
		case k < ps.bodyLines.len():
			s.bodyAfter = ps.bodyLines.at(k)
		}
	}
	ps.same = s
}

// editedLines returns the body lines [k0, k1) that a scan of every line
// must look at: the lines before k0 are the previous version's at the
// same offsets, and those from k1 on its lines at the same distance from
// the end (each with the byte after it). Without a known change it is
// every line.
func (ps *parser) editedLines() (k0, k1 int) {
	n := ps.bodyLines.len()
	s := ps.same
	if s == nil {
		return 0, n
	}
	// The lines that start before bodyBefore, and the first that starts
	// at or after bodyAfter.
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps.bodyLines.at(m) < s.bodyBefore {
			lo = m + 1
		} else {
			hi = m
		}
	}
	k0 = lo
	lo, hi = k0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps.bodyLines.at(m) < s.bodyAfter {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return k0, lo
}

// lineOffset returns the body offset where line k starts, or the body's
// end for k past the last line.
func (ps *parser) lineOffset(k int) int {
	if k >= ps.bodyLines.len() {
		return len(ps.body)
	}
	return ps.bodyLines.at(k)
}

// at returns the index of offset o in the ascending offs, or -1. hint
// is where the last lookup of this parse found its offset: a parse looks
// its chunks and regions up in file order, so the next one is usually
// the one after it, found without a binary search; at moves hint on.
func at(offs []int, o int, hint *int) int {
	if h := *hint; h >= 0 && h < len(offs) && offs[h] <= o {
		for i := h; i < len(offs) && i <= h+2; i++ {
			if offs[i] == o {
				*hint = i + 1
				return i
			}
			if offs[i] > o {
				return -1
			}
		}
	}
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
		*hint = lo + 1
		return lo
	}
	return -1
}

// chunk returns the previous parse's result for the chunk labelled label
// with source src at file offset off of the new version, or nil. end is
// the file offset where src ends; s, when known, says what the edit left
// alone; hint is the parse's cursor in r's chunks (see at).
func (r *Reuse) chunk(s *same, hint *int, off, end, size int, label, src string) *chunkResult {
	if r == nil {
		return nil
	}
	d := size - r.size
	if s != nil {
		// The chunk's text with a byte either side, for its line breaks.
		o := -1
		switch {
		case end+2 <= s.fileBefore:
			o = off
		case off-1 >= s.fileAfter:
			o = off - d
		}
		if i := at(r.chunkAt, o, hint); o >= 0 && i >= 0 {
			if c := r.chunks[i]; len(c.key.source) == len(src) && c.key.label == label {
				return c
			}
		}
		return nil
	}
	for _, o := range [2]int{off, off - d} {
		if i := at(r.chunkAt, o, hint); i >= 0 {
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
// offset off of the new version, or nil; s, when known, says what the
// edit left alone; hint is the parse's cursor in r's regions.
func (r *Reuse) region(s *same, hint *int, off, bodySize int, text string) *regionScan {
	if r == nil {
		return nil
	}
	d := bodySize - r.bodySize
	if s != nil {
		o := -1
		switch {
		case off+len(text) <= s.bodyBefore:
			o = off
		case off >= s.bodyAfter:
			o = off - d
		}
		if i := at(r.regionAt, o, hint); o >= 0 && i >= 0 {
			if sc := r.regions[i]; len(sc.key) == len(text) {
				return sc
			}
		}
		return nil
	}
	for _, o := range [2]int{off, off - d} {
		if i := at(r.regionAt, o, hint); i >= 0 {
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

// Forget drops from the parse caches what old (a document's previous
// parse) holds and next (its new parse) does not: the compiled chunks and
// Markdown region scans whose text an edit replaced. A language server
// calls it when a document's new parse replaces the previous one. The
// caches find a chunk by its text when nothing else gives it (Reuse
// gives the unchanged ones by position), and a replaced chunk's entry
// keeps its syntax tree and every fact the analyses memoised on it
// (Chunk.Memo) alive until its generation ends, so an editing session
// would otherwise keep a copy of every chunk as it was typed, up to the
// cache's budget, for the collector to mark. Text typed again (an undo)
// is parsed again, as it was the first time.
func Forget(old, next *Reuse) {
	if old == nil || next == nil || old == next {
		return
	}
	forgetReplaced(old.chunks, next.chunks, cache)
	forgetReplaced(old.regions, next.regions, regions)
}

// forgetReplaced drops from c the values of old that next does not hold.
// Both are in file order, and an edit changes a run of them: what is
// before and after it is the same values at the same places from either
// end, and only the values between are looked for in next.
func forgetReplaced[K comparable, V comparable](old, next []V, c *genCache[K, V]) {
	lo := 0
	for lo < len(old) && lo < len(next) && old[lo] == next[lo] {
		lo++
	}
	hi := 0
	for hi < len(old)-lo && hi < len(next)-lo && old[len(old)-1-hi] == next[len(next)-1-hi] {
		hi++
	}
	gone := old[lo : len(old)-hi]
	if len(gone) == 0 {
		return
	}
	var in map[V]bool // made for a large change only
	if len(gone) > 16 {
		in = make(map[V]bool, len(next))
		for _, v := range next {
			in[v] = true
		}
	}
	for _, v := range gone {
		if in != nil && in[v] || in == nil && slices.Contains(next, v) {
			continue
		}
		c.drop(v)
	}
}
