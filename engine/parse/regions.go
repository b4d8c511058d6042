package parse

import (
	"bytes"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	gmparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// The Markdown scan is memoised by region, as compiled chunks are by
// source: an editor re-parses the whole file after each keystroke, and
// the CommonMark block parse is the largest part of a warm parse.
//
// A line with an ATX heading at column 0 starts a new top-level block in
// CommonMark unless a top-level fenced code block or HTML block is still
// open before it: it interrupts a paragraph, it is never a lazy
// continuation line, and being unindented it closes every open list item
// and block quote (and whatever they contain). So the body is cut before
// such lines into regions whose block structure is the same parsed on
// their own as in the whole body, provided the region before each cut
// ends with no fenced code or HTML block open. Each region's scan
// (headings, thematic breaks, lua fences, link reference definitions) is
// cached by its text with region-relative offsets. A region that ends
// with an open block is instead merged with everything after it, which is
// what the whole-body parse does too. Heading titles that depend on link
// references are named with the references of the whole body.

// regionScan is the scan of one region, offsets relative to its start.
type regionScan struct {
	key      string // the cache key, owned (not a substring of a body)
	headings []mdHeading
	// raws[i] is heading i's title text when it may use a link reference
	// ("" otherwise).
	raws                    []string
	breaks, luaOpen, shared []int
	refs                    []gmparser.Reference
	// clean is false when a fenced code or HTML block is open at the end.
	clean bool
	// ok is false when a title needs the whole-body inline parse.
	ok bool
}

// regions holds up to 4096 scans or 2 MiB of region text per generation
// (seven times a 10,000-line prompt's body).
var regions = newGenCache(4096, 2<<20,
	func(k string) int { return len(k) },
	func(r *regionScan) string { return r.key })

// cachedRegion returns the cached scan of a region's text, or nil.
func cachedRegion(text string) *regionScan {
	r, _ := regions.get(text)
	return r
}

// cachedRegion returns the scan of body[start:end] the previous version's
// parse made (Reuse) or the cache holds, or nil.
func (ps *parser) cachedRegion(start, end int) *regionScan {
	text := ps.bodyStr[start:end]
	if r := ps.prev.region(ps.same, &ps.regionHint, start, len(ps.body), text); r != nil {
		return r
	}
	return cachedRegion(text)
}

// cacheRegion stores a region's scan under a copy of its text.
func cacheRegion(text string, r *regionScan) {
	if !regions.on() {
		return
	}
	r.key = strings.Clone(text)
	regions.put(r)
}

// scanRegions scans the body region by region. It returns false when a
// heading title needs the whole-body parse (scanMarkdown then does that).
func (ps *parser) scanRegions() bool {
	cuts := ps.atxCuts()
	// known[k] is the scan of the region [bounds[k], bounds[k+1]) when
	// prefillRegions found or made it.
	var bounds []int
	var known []*regionScan
	if prefill {
		bounds, known = ps.prefillRegions(cuts)
	}
	type placed struct {
		r     *regionScan
		start int
	}
	parts := make([]placed, 0, len(cuts)+1)
	next := 0 // index into cuts of the first cut after start
	kb := 0   // index into bounds of start
	for start := 0; start < len(ps.body); {
		for next < len(cuts) && cuts[next] <= start {
			next++
		}
		end := len(ps.body)
		if next < len(cuts) {
			end = cuts[next]
		}
		var r *regionScan
		for kb < len(known) && bounds[kb] < start {
			kb++
		}
		if kb < len(known) && bounds[kb] == start && bounds[kb+1] == end {
			r = known[kb]
		}
		if r == nil {
			r = ps.regionAt(start, end)
		}
		if !r.clean && end < len(ps.body) {
			// An open fence or HTML block runs on past the cut: the rest
			// of the body is one region, as in the whole-body parse.
			end = len(ps.body)
			r = ps.regionAt(start, end)
		}
		if !r.ok {
			return false
		}
		parts = append(parts, placed{r, start})
		start = end
	}
	if r := ps.prompt.reuse; r != nil {
		r.regionAt = make([]int, 0, len(parts))
		r.regions = make([]*regionScan, 0, len(parts))
		for _, p := range parts {
			if p.r.key != "" { // cached, so its key is its own copy
				r.regionAt = append(r.regionAt, p.start)
				r.regions = append(r.regions, p.r)
			}
		}
	}
	var refs []gmparser.Reference
	for _, p := range parts {
		refs = append(refs, p.r.refs...)
	}
	ps.refs = refs
	nh, nl := 0, 0
	for _, p := range parts {
		nh += len(p.r.headings)
		nl += len(p.r.luaOpen)
	}
	heads := make([]mdHeading, 0, nh)
	ps.headings = make([]*mdHeading, 0, nh)
	ps.luaOpen = make([]int, 0, nl)
	for _, p := range parts {
		for i, h := range p.r.headings {
			h.start += p.start
			h.end += p.start
			h.nameA += p.start
			h.nameB += p.start
			if raw := p.r.raws[i]; raw != "" && len(refs) > len(p.r.refs) {
				// References from other regions may turn the title's
				// brackets into links.
				name, ok := ps.titleOf([]byte(raw))
				if !ok {
					return false
				}
				h.name = name
			}
			heads = append(heads, h)
			ps.headings = append(ps.headings, &heads[len(heads)-1])
		}
		for _, b := range p.r.breaks {
			ps.breaks = append(ps.breaks, p.start+b)
		}
		for _, o := range p.r.luaOpen {
			ps.luaOpen = append(ps.luaOpen, p.start+o)
		}
		for _, o := range p.r.shared {
			ps.shared = append(ps.shared, p.start+o)
		}
	}
	ps.sortMarkdown()
	return true
}

// atxCuts returns the body offsets of the lines that start with an ATX
// heading at column 0. After a known change it takes those outside the
// edited lines from the previous version's parse.
func (ps *parser) atxCuts() []int {
	k0, k1 := 0, ps.bodyLines.len()
	var was []int
	if r := ps.prev; r != nil && r.cutsOK && ps.same != nil {
		k0, k1 = ps.editedLines()
		was = r.cuts
	}
	var cuts []int
	if k0 > 0 {
		// The previous version's before line k0 (same offsets).
		end := ps.lineOffset(k0)
		n := searchInts(was, end)
		cuts = make([]int, n, n+1+len(was)-n)
		copy(cuts, was[:n])
	}
	for k := k0; k < k1; k++ {
		ls := ps.bodyLines.at(k)
		if ls < len(ps.body) && ps.body[ls] == '#' && atxStart(ps.body[ls:ps.lineEndAt(ls)]) {
			cuts = append(cuts, ls)
		}
	}
	if k1 < ps.bodyLines.len() && was != nil {
		// The previous version's from line k1 on (same distance from the
		// end).
		d := len(ps.body) - ps.prev.bodySize
		for _, o := range was[searchInts(was, ps.bodyLines.at(k1)-d):] {
			cuts = append(cuts, o+d)
		}
	}
	if r := ps.prompt.reuse; r != nil {
		r.cuts, r.cutsOK = cuts, true
	}
	return cuts
}

// prefill enables prefillRegions (tests turn it off to check regionAt
// alone).
var prefill = true

// prefillRegions parses each run of consecutive uncached regions (all
// of them when a file is opened) in one goldmark parse instead of one per
// region, and caches the per-region scans it yields. That is exact when
// every cut inside the run starts a top-level heading in the run's parse
// (no fence or HTML block was open before it) and the run defines no link
// references (goldmark does not say where those are); otherwise the
// regions are left to regionAt. It returns the region bounds and, for
// each region, the scan it found in the cache or made (nil for the
// others).
func (ps *parser) prefillRegions(cuts []int) ([]int, []*regionScan) {
	bounds := make([]int, 0, len(cuts)+2)
	bounds = append(bounds, 0)
	for _, c := range cuts {
		if c > 0 {
			bounds = append(bounds, c)
		}
	}
	bounds = append(bounds, len(ps.body))
	scans := make([]*regionScan, len(bounds)-1)
	for i := 0; i+1 < len(bounds); {
		j := i
		for j+1 < len(bounds) {
			if scans[j] = ps.cachedRegion(bounds[j], bounds[j+1]); scans[j] != nil {
				break
			}
			j++
		}
		if j-i >= 2 {
			if made := ps.prefillRun(bounds[i : j+1]); made != nil {
				copy(scans[i:j], made)
			}
		}
		i = j + 1
	}
	return bounds, scans
}

// prefillRun parses body[b[0]:b[len(b)-1]] once and caches the scans of
// the regions [b[k], b[k+1]) when that is exact (see prefillRegions). It
// returns the scans it cached, or nil.
func (ps *parser) prefillRun(b []int) []*regionScan {
	start, end := b[0], b[len(b)-1]
	sub := ps.subParser(start, end)
	ctx := gmparser.NewContext()
	doc := blockParser().Parse(text.NewReader(sub.body), gmparser.WithContext(ctx))
	if len(ctx.References()) > 0 {
		return nil
	}
	heads := map[int]bool{}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok {
			p := h.Pos()
			if p < 0 && h.Lines().Len() > 0 {
				p = h.Lines().At(0).Start
			}
			if p >= 0 {
				heads[sub.lineStartAt(min(p, len(sub.body)))] = true
			}
		}
	}
	for _, c := range b[1 : len(b)-1] {
		if !heads[c-start] {
			return nil
		}
	}
	if !sub.collect(doc) {
		return nil
	}
	scans := make([]*regionScan, len(b)-1)
	for k := range scans {
		scans[k] = &regionScan{clean: true, ok: true}
	}
	scans[len(scans)-1].clean = closedAtEnd(doc, sub.body)
	// regionOf returns the index of the region holding run offset off.
	regionOf := func(off int) int {
		k := sort.SearchInts(b, start+off+1) - 1
		return max(0, min(k, len(scans)-1))
	}
	for _, h := range sub.headings {
		k := regionOf(h.start)
		d := b[k] - start
		r := scans[k]
		raw := titleRaw(sub.body, h)
		h.start, h.end, h.nameA, h.nameB = h.start-d, h.end-d, h.nameA-d, h.nameB-d
		r.headings = append(r.headings, *h)
		r.raws = append(r.raws, raw)
	}
	for _, o := range sub.breaks {
		k := regionOf(o)
		scans[k].breaks = append(scans[k].breaks, o-(b[k]-start))
	}
	for _, o := range sub.luaOpen {
		k := regionOf(o)
		scans[k].luaOpen = append(scans[k].luaOpen, o-(b[k]-start))
	}
	for _, o := range sub.shared {
		k := regionOf(o)
		scans[k].shared = append(scans[k].shared, o-(b[k]-start))
	}
	for k, r := range scans {
		cacheRegion(ps.bodyStr[b[k]:b[k+1]], r)
	}
	return scans
}

// subParser is a parser over body[start:end] alone, for the Markdown scan.
func (ps *parser) subParser(start, end int) *parser {
	sub := &parser{body: ps.body[start:end]}
	// The lines from the one holding start to the last starting before end.
	k := max(ps.bodyLineOf(start), 0)
	n := k
	for n < ps.bodyLines.len() && ps.bodyLines.at(n) < end {
		n++
	}
	sub.bodyLines = lineTable{ps.bodyLines.starts[k:n], ps.bodyLines.base + start}
	return sub
}

// titleRaw returns a heading's title text when it has brackets (a link
// reference may apply), else "".
func titleRaw(body []byte, h *mdHeading) string {
	t := body[min(h.nameA, len(body)):min(h.nameB, len(body))]
	if !bytes.ContainsRune(t, '[') {
		return ""
	}
	return string(t)
}

// regionAt returns the scan of body[start:end], from the cache or by
// parsing the region on its own.
func (ps *parser) regionAt(start, end int) *regionScan {
	key := ps.bodyStr[start:end]
	if r := ps.cachedRegion(start, end); r != nil {
		return r
	}
	sub := ps.subParser(start, end)
	ctx := gmparser.NewContext()
	doc := blockParser().Parse(text.NewReader(sub.body), gmparser.WithContext(ctx))
	sub.refs = ctx.References()
	r := &regionScan{refs: ownRefs(sub.refs)}
	r.ok = sub.collect(doc)
	r.clean = closedAtEnd(doc, sub.body)
	for _, h := range sub.headings {
		r.headings = append(r.headings, *h)
		r.raws = append(r.raws, titleRaw(sub.body, h))
	}
	r.breaks, r.luaOpen, r.shared = sub.breaks, sub.luaOpen, sub.shared
	cacheRegion(key, r)
	return r
}

// closedAtEnd reports whether no fenced code or HTML block of the
// document's top level is still open at the end of src.
func closedAtEnd(doc ast.Node, src []byte) bool {
	switch n := doc.LastChild().(type) {
	case *ast.FencedCodeBlock:
		return fenceClosed(n, src)
	case *ast.HTMLBlock:
		if n.HTMLBlockType == ast.HTMLBlockType6 || n.HTMLBlockType == ast.HTMLBlockType7 {
			// Ended by a blank line: the last line of src must be one.
			return endsWithBlankLine(src)
		}
		return n.HasClosure()
	}
	return true
}

// fenceClosed reports whether a fenced code block has its closing fence
// (the line after its last content line) inside src.
func fenceClosed(n *ast.FencedCodeBlock, src []byte) bool {
	open := lineStartIn(src, min(max(n.Pos(), 0), len(src)))
	i := open
	for i < len(src) && i-open < 3 && src[i] == ' ' {
		i++
	}
	if i >= len(src) || (src[i] != '`' && src[i] != '~') {
		return false
	}
	ch, run := src[i], 0
	for i < len(src) && src[i] == ch {
		i++
		run++
	}
	after := lineEndIn(src, open)
	if l := n.Lines(); l.Len() > 0 {
		last := l.At(l.Len() - 1)
		after = lineEndIn(src, min(last.Start, len(src)))
	}
	if after >= len(src) {
		return false
	}
	line := src[after:lineEndIn(src, after)]
	j := 0
	for j < len(line) && j < 3 && line[j] == ' ' {
		j++
	}
	k := j
	for k < len(line) && line[k] == ch {
		k++
	}
	if k-j < run {
		return false
	}
	for _, c := range line[k:] {
		if c != ' ' && c != '\t' && c != '\n' {
			return false
		}
	}
	return true
}

func endsWithBlankLine(src []byte) bool {
	if len(src) == 0 || src[len(src)-1] != '\n' {
		return false
	}
	for i := len(src) - 2; i >= 0 && src[i] != '\n'; i-- {
		if src[i] != ' ' && src[i] != '\t' {
			return false
		}
	}
	return true
}

func lineStartIn(src []byte, p int) int {
	for p > 0 && src[p-1] != '\n' {
		p--
	}
	return p
}

func lineEndIn(src []byte, p int) int {
	for p < len(src) {
		if src[p] == '\n' {
			return p + 1
		}
		p++
	}
	return len(src)
}

// ownRefs copies link references, whose bytes point into the parsed text,
// so that a cached scan does not pin a whole body.
func ownRefs(refs []gmparser.Reference) []gmparser.Reference {
	out := make([]gmparser.Reference, len(refs))
	for i, r := range refs {
		out[i] = gmparser.NewReference(bytes.Clone(r.Label()), bytes.Clone(r.Destination()), bytes.Clone(r.Title()))
	}
	return out
}
