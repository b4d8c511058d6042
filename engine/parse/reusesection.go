package parse

import "github.com/forge-lsp/forge-lsp/engine/source"

// A section's blocks, labels, loop flag and list items depend on nothing
// but its content's bytes, the thematic breaks and ```lua openers the
// Markdown scan found in them, and its name (which the chunk labels
// carry). When ParseEdited knows that a section's content lies in the
// text the edit left alone, and the previous parse found the same
// breaks and openers there under the same name, the section's blocks
// are the previous parse's moved by the edit's length: they are copied
// with their positions shifted instead of being split, trimmed, labelled
// and looked up again. A section whose processing reported a parse error
// is processed afresh (error messages carry line numbers), and so is
// every section the edit touches. The section tree, headings and the
// structure errors are always built anew: they are cheap, and depend on
// headings anywhere in the file.

// sectionRecord is a section the next version's parse may copy: its
// content is body [a, b) of its version.
type sectionRecord struct {
	a, b int
	s    *Section
	// breaks and luaOpen index the first of its version's breaks and
	// openers at or after a.
	breaks, luaOpen int32
}

// markdownAt returns the indexes of the first thematic break and
// ```lua opener at or after body offset a. A parse asks in ascending a
// (its sections in file order), so each moves a cursor on.
func (ps *parser) markdownAt(a int) (breaks, luaOpen int) {
	if a < ps.mdAt {
		// Not ascending after all: from the start.
		ps.breakCur, ps.luaCur = 0, 0
	}
	ps.mdAt = a
	for ps.breakCur < len(ps.breaks) && ps.breaks[ps.breakCur] < a {
		ps.breakCur++
	}
	for ps.luaCur < len(ps.luaOpen) && ps.luaOpen[ps.luaCur] < a {
		ps.luaCur++
	}
	return ps.breakCur, ps.luaCur
}

// keepSection records s, whose content is body [a, b), for the next
// version's parse when processing it reported no error.
func (ps *parser) keepSection(s *Section, a, b int, clean bool) {
	r := ps.prompt.reuse
	if r == nil || !clean {
		return
	}
	if r.secAt == nil {
		r.secAt = make([]int, 0, len(ps.headings))
		r.secs = make([]sectionRecord, 0, len(ps.headings))
	}
	bi, li := ps.markdownAt(a)
	r.secAt = append(r.secAt, a)
	r.secs = append(r.secs, sectionRecord{a, b, s, int32(bi), int32(li)})
	r.blocks += len(s.Blocks)
}

// reuseSection fills s, whose content is body [a, b), from the previous
// version's parse of the same content (see above), and reports whether
// it could.
func (ps *parser) reuseSection(s *Section, a, b int) bool {
	r, sm := ps.prev, ps.same
	if r == nil || sm == nil || len(r.secAt) == 0 {
		return false
	}
	// o is the content's body offset in the previous version; dFile and
	// dLine how far its file offsets and lines moved.
	var o, dFile, dLine int
	switch {
	case b <= sm.bodyBefore:
		o = a
	case a >= sm.bodyAfter:
		o = a - (len(ps.body) - r.bodySize)
		dFile = len(ps.file.Content) - r.size
		dLine = ps.file.LineCount() - r.lines
	default:
		return false
	}
	i := at(r.secAt, o, &ps.secHint)
	if i < 0 {
		return false
	}
	rec := r.secs[i]
	if rec.b-rec.a != b-a || rec.s.Name != s.Name {
		return false
	}
	bi, li := ps.markdownAt(a)
	if !sameOffsets(ps.breaks[bi:], a, b, r.breaks[rec.breaks:], o) || !sameOffsets(ps.luaOpen[li:], a, b, r.luaOpen[rec.luaOpen:], o) {
		return false
	}
	ps.copySection(s, rec.s, a-o, dFile, dLine)
	return true
}

// sameOffsets reports whether the offsets in the ascending now that lie
// in [a, b) are those in the ascending was from o on, moved by a-o. now
// and was may start anywhere before a and o.
func sameOffsets(now []int, a, b int, was []int, o int) bool {
	i, j := 0, 0
	for i < len(now) && now[i] < a {
		i++
	}
	for j < len(was) && was[j] < o {
		j++
	}
	for ; i < len(now) && now[i] < b; i, j = i+1, j+1 {
		if j >= len(was) || was[j]-o != now[i]-a {
			return false
		}
	}
	return j >= len(was) || was[j]-o >= b-a
}

// blockList returns a section's block list of length n, cut from a
// larger allocation (a copied section's blocks are known in number).
func (ps *parser) blockList(n int) []*Block {
	if len(ps.blockLists) < n {
		// At first room for every block of the sections there are to
		// copy, then for a few more sections.
		size := max(n, 16)
		if !ps.listsMade {
			size, ps.listsMade = max(n, ps.prev.blocks), true
		}
		ps.blockLists = make([]*Block, size)
	}
	l := ps.blockLists[:n:n]
	ps.blockLists = ps.blockLists[n:]
	return l
}

// searchInts is sort.SearchInts without the closure.
func searchInts(a []int, x int) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// copySection gives s the processed content of old, a section of the
// previous version whose content is s's moved by dBody body bytes,
// dFile file bytes and dLine lines.
func (ps *parser) copySection(s, old *Section, dBody, dFile, dLine int) {
	move := func(sp source.Span) source.Span { return source.Span{Start: sp.Start + dFile, End: sp.End + dFile} }
	s.Live, s.Dead, s.OffWalk = move(old.Live), move(old.Dead), old.OffWalk
	if old.OffWalk {
		s.Marker = move(old.Marker)
	}
	if ps.toFile == nil {
		ps.toFile = ps.off
	}
	s.Blocks = ps.blockList(len(old.Blocks))
	for i, ob := range old.Blocks {
		if ob.Kind == LuaBlock && dFile == 0 && dLine == 0 {
			// Not moved (the section is before the edit, or the edit kept
			// the length and lines of what it replaced): the previous
			// parse's block is this one's. A Lua block and its chunk are
			// never written after their parse and hold nothing of their
			// version's text (the source is the compile cache's copy), so
			// the parses share it instead of a copy per edit.
			s.Blocks[i] = ob
			if r := ps.prompt.reuse; r != nil && ob.Chunk.res != nil {
				r.addChunk(ob.Chunk.SourceSpan.Start, ob.Chunk.res, len(ps.luaOpen)+len(ps.shared))
			}
			continue
		}
		if ob.Kind == LuaBlock {
			oc := ob.Chunk
			lb := ps.luaBlocks.alloc(len(ps.luaOpen))
			lb.c = Chunk{Source: oc.Source, Label: oc.Label, Name: oc.Name, FirstLine: oc.FirstLine + dLine,
				Span: move(oc.Span), SourceSpan: move(oc.SourceSpan), Shared: oc.Shared, AST: oc.AST, res: oc.res}
			lb.b = Block{Kind: LuaBlock, Chunk: &lb.c}
			s.Blocks[i] = &lb.b
			if r := ps.prompt.reuse; r != nil && oc.res != nil {
				r.addChunk(lb.c.SourceSpan.Start, oc.res, len(ps.luaOpen)+len(ps.shared))
			}
			continue
		}
		op := ob.Prose
		// The text is cut from this version's body, not kept from the
		// previous one (which it would pin).
		start := op.bodyStart + dBody
		pb := ps.proses.alloc(len(ps.luaOpen) + len(ps.headings) + 1)
		pb.p = Prose{Text: ps.bodyStr[start : start+len(op.Text)], Span: move(op.Span), LoopCapable: op.LoopCapable,
			bodyStart: start, toFile: ps.toFile}
		if t := op.tmpl.Load(); t != nil {
			pb.p.tmpl.Store(t)
		}
		pb.b = Block{Kind: ProseBlock, Prose: &pb.p}
		s.Blocks[i] = &pb.b
	}
	if old.IsList {
		ps.listCheck(s)
	}
}
