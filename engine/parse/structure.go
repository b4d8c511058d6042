package parse

import (
	"fmt"
	"sort"
	"strings"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

func (ps *parser) headingSpan(h *mdHeading) source.Span { return ps.span(h.start, h.end) }

func (ps *parser) mkHeading(h *mdHeading) *Heading {
	hd := ps.heading(h)
	return &hd
}

func (ps *parser) heading(h *mdHeading) Heading {
	return Heading{Level: h.level, Name: h.name, Span: ps.headingSpan(h), NameSpan: ps.span(h.nameA, h.nameB), Setext: h.setext}
}

// sectionHeading is a section and its heading in one allocation.
type sectionHeading struct {
	s Section
	h Heading
}

// structure builds the H1, the section tree, the blocks and the list
// items from the scanned body (docs/language.md#headings-and-sections
// to docs/language.md#list-sections).
func (ps *parser) structure() {
	p := ps.prompt
	// Exactly one H1 (docs/language.md#the-h1),, counted over the whole body.
	h1 := -1
	for i, h := range ps.headings {
		if h.level != 1 {
			continue
		}
		if h1 < 0 {
			h1 = i
			continue
		}
		l, _ := ps.file.Position(ps.off(ps.headings[h1].start))
		extra := ""
		if h.setext {
			extra = " (a line underlined with === is an H1; insert a blank line before the === or use a different rule)"
		}
		ps.errorf(CodeStructure, ps.headingSpan(h), "prompt must contain exactly one H1 title; the first is at line %d%s: make this an H2 (##) or remove it", l, extra)
	}
	// A heading's content runs to the next heading. Lone CRs are line
	// breaks to the Markdown parser but not to the line model, so clamp
	// rather than trust that the two agree.
	regionEnd := func(i int) int {
		if i+1 < len(ps.headings) {
			return max(ps.headings[i+1].start, ps.headings[i].end)
		}
		return max(len(ps.body), ps.headings[i].end)
	}
	firstSection := 0
	if h1 < 0 {
		ps.errorf(CodeStructure, ps.span(0, ps.lineEndAt(0)), "prompt requires an H1 title: add a `# Title` line after the frontmatter")
		// Recover: treat every heading as if an empty H1 preceded them.
	} else {
		h := ps.headings[h1]
		p.H1 = ps.mkHeading(h)
		p.Title = h.name
		if h.name == "" {
			ps.errorf(CodeStructure, p.H1.Span, "prompt H1 title must not be empty: write a title after the `#`")
		}
		p.H1Region = ps.span(h.end, regionEnd(h1))
		firstSection = h1 + 1
	}
	// Shared-fence placement (docs/language.md#shared-library).
	for i, o := range ps.shared {
		if i > 0 {
			ps.errorf(CodeFence, ps.span(o, ps.lineEndAt(o)), "prompt allows at most one `lua shared` fence: merge this one into the first")
			continue
		}
		if h1 < 0 || o < ps.headings[h1].end || o >= regionEnd(h1) {
			ps.errorf(CodeFence, ps.span(o, ps.lineEndAt(o)), "`lua shared` fence is allowed only in H1: move it between the `# Title` line and the first section")
		}
	}
	if h1 >= 0 {
		ps.h1Region(ps.headings[h1].end, regionEnd(h1))
	}
	// The section tree (docs/language.md#section-tree).
	var stack []*Section
	var siblingsOf = func(parent *Section) *[]*Section {
		if parent == nil {
			return &p.Sections
		}
		return &parent.Children
	}
	for i := firstSection; i < len(ps.headings); i++ {
		h := ps.headings[i]
		if h.level == 1 {
			// An extra H1 (already reported) closes every open section.
			stack = stack[:0]
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].Level >= h.level {
			stack = stack[:len(stack)-1]
		}
		var parent *Section
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		want := 2
		if parent != nil {
			want = parent.Level + 1
		}
		if h.level != want {
			ps.errorf(CodeStructure, ps.headingSpan(h), "section `%s` is an orphan H%d heading with no parent H%d: use %s or add the missing H%d above it",
				h.name, h.level, h.level-1, strings.Repeat("#", want), h.level-1)
			continue
		}
		sh := ps.sections.alloc(len(ps.headings))
		sh.h = ps.heading(h)
		sh.s = Section{Heading: &sh.h, Name: h.name, Level: h.level, Parent: parent}
		s := &sh.s
		s.Content = ps.span(h.end, regionEnd(i))
		if h.name == "" {
			ps.errorf(CodeStructure, s.Heading.Span, "an H%d section heading must not be empty: give the section a name", h.level)
		}
		sib := siblingsOf(parent)
		*sib = append(*sib, s)
		stack = append(stack, s)
		if a, b := h.end, regionEnd(i); !ps.reuseSection(s, a, b) {
			nerr := len(ps.prompt.Errors)
			ps.section(s, a, b)
			ps.keepSection(s, a, b, len(ps.prompt.Errors) == nerr)
		} else {
			ps.keepSection(s, a, b, true)
		}
	}
	// Duplicate siblings (docs/language.md#section-tree), reported at the second heading.
	var dup func(list []*Section)
	dup = func(list []*Section) {
		var seen map[string]*Section
		if len(list) > 1 {
			seen = make(map[string]*Section, len(list))
		}
		for _, s := range list {
			if seen == nil {
				// A single section has no sibling.
			} else if first := seen[s.Name]; first != nil && s.Name != "" {
				a, _ := ps.file.Position(first.Heading.Span.Start)
				b, _ := ps.file.Position(s.Heading.Span.Start)
				ps.errorf(CodeStructure, s.Heading.Span, "duplicate sibling section name `%s`: first declared at line %d, again at line %d; rename one of them (sections are addressed by name)", s.Name, a, b)
			} else if first == nil {
				seen[s.Name] = s
			}
			dup(s.Children)
		}
	}
	dup(p.Sections)
}

// firstBreakIn returns the body offset of the first thematic break in
// [a, b), or -1.
func (ps *parser) firstBreakIn(a, b int) int {
	for _, o := range ps.breaks {
		if o >= a && o < b {
			return o
		}
	}
	return -1
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// h1Region processes the H1 region [a, b)
// (docs/language.md#h1-region).
func (ps *parser) h1Region(a, b int) {
	p := ps.prompt
	live := b
	if r := ps.firstBreakIn(a, b); r >= 0 {
		live = r
	}
	p.H1Live = ps.span(a, live)
	region := []byte(string(ps.body[a:live]))
	// The removed `lua prompt` form.
	for off := 0; off < len(region); {
		e := strings.IndexByte(string(region[off:]), '\n')
		line := string(region[off:])
		if e >= 0 {
			line = line[:e]
		}
		if isBlank(line) {
			if e < 0 {
				break
			}
			off += e + 1
			continue
		}
		if line == "```lua prompt" {
			ps.errorf(CodeFence, ps.span(a+off, a+off+len(line)), "the `lua prompt` fence form was removed: use ```lua for H1 code or ```lua shared for a library loaded into every section (%s; docs/migration.md)", oldLuaPrompt().Since())
		}
		break
	}
	// The shared library.
	for _, o := range ps.shared {
		if o < a || o >= live {
			continue
		}
		rel := o - a
		closeRel, ok := findCloser(string(region), rel)
		open := ps.lineEndAt(o)
		if !ok {
			ps.errorf(CodeFence, ps.span(o, open), "prompt `lua shared` fence is not closed: add a line with exactly ``` (no spaces) after the library")
			break
		}
		srcStart := open
		srcEnd := a + closeRel
		c := &Chunk{Label: "prompt shared library", Name: "prompt shared library", Shared: true}
		c.Source = strings.TrimRight(string(ps.body[srcStart:srcEnd]), "\r\n")
		c.SourceSpan = ps.span(srcStart, srcStart+len(c.Source))
		c.Span = ps.span(o, ps.lineEndAt(a+closeRel))
		c.FirstLine, _ = ps.file.Position(c.Span.Start)
		c.FirstLine++
		ps.compile(c)
		p.Shared = c
		// Blank the fence, keeping line breaks, so H1 splitting ignores it.
		for i := rel; i < ps.lineEndAt(a+closeRel)-a && i < len(region); i++ {
			if region[i] != '\n' {
				region[i] = ' '
			}
		}
		break
	}
	blocks := ps.split(string(region), a, p.Title, true)
	if len(blocks) == 1 && blocks[0].Kind == ProseBlock && blocks[0].Prose.Text == "" {
		blocks = nil
	}
	p.H1Blocks = blocks
	var desc []string
	for _, bl := range blocks {
		if bl.Kind == ProseBlock && bl.Prose.Text != "" {
			desc = append(desc, bl.Prose.Text)
		}
	}
	p.Description = strings.Join(desc, "\n\n")
}

// findCloser scans lines after the opener line at rel for one that is
// exactly ``` and returns the offset of that line's start.
func findCloser(s string, rel int) (int, bool) {
	i := strings.IndexByte(s[rel:], '\n')
	if i < 0 {
		return 0, false
	}
	first := rel + i + 1
	// Each ``` from there on, until one fills a line (backticks are rare,
	// so this skips most lines in one search).
	for from := first; ; {
		j := strings.Index(s[from:], "```")
		if j < 0 {
			return 0, false
		}
		at := from + j
		if (at == first || s[at-1] == '\n') && (at+3 == len(s) || s[at+3] == '\n') {
			return at, true
		}
		from = at + 1
	}
}

// section applies break roles, splits blocks and finds list items for the
// section whose content is body [a, b).
func (ps *parser) section(s *Section, a, b int) {
	liveA, liveB := a, b
	s.Dead = ps.span(b, b)
	if r1 := ps.firstBreakIn(a, b); r1 >= 0 {
		if isBlank(string(ps.body[a:r1])) {
			s.OffWalk = true
			s.Marker = ps.span(r1, ps.lineEndAt(r1))
			liveA = ps.lineEndAt(r1)
			if r2 := ps.firstBreakIn(liveA, b); r2 >= 0 {
				liveB = r2
				s.Dead = ps.span(r2, b)
			}
		} else {
			liveB = r1
			s.Dead = ps.span(r1, b)
		}
	}
	s.Live = ps.span(liveA, liveB)
	s.Blocks = ps.split(ps.bodyStr[liveA:liveB], liveA, s.Name, false)
	ps.listCheck(s)
}

// split cuts live content (body bytes starting at body offset base) into
// alternating prose and Lua blocks (docs/language.md#block-splitting).
func (ps *parser) split(str string, base int, name string, h1 bool) []*Block {
	// ps.luaOpen is sorted: find this region's openers by binary search.
	openers := ps.luaOpen[sort.SearchInts(ps.luaOpen, base):]
	n := 0
	for n < len(openers) && openers[n] < base+len(str) {
		n++
	}
	openers = openers[:n] // body offsets: subtract base
	what := "section"
	if len(openers) == 0 {
		return ps.finishBlocks([]*Block{ps.prose(str, 0, len(str), base)}, name, h1, true)
	}
	// Prose and chunks alternate: at most one prose block more than chunks.
	blocks := make([]*Block, 0, 2*len(openers)+1)
	p := 0
	nerr := len(ps.prompt.Errors)
	for i, o := range openers {
		o -= base
		if o < p {
			ps.errorf(CodeFence, ps.span(base+o, ps.lineEndAt(base+o)), "%s `%s` `lua` fence is not closed exactly: the previous fence's closing line must be exactly ``` (no spaces, three backticks)", what, name)
			continue
		}
		closeAt, ok := findCloser(str, o)
		if !ok {
			kind := ""
			switch {
			case i == 0 && isBlank(str[p:o]):
				kind = "prologue "
			case i == len(openers)-1:
				kind = "epilog "
			}
			ps.errorf(CodeFence, ps.span(base+o, ps.lineEndAt(base+o)), "%s `%s` %s`lua` fence is not closed: add a line with exactly ``` (no spaces) after the code", what, name, kind)
			// Recover: everything up to here keeps its blocks; the rest of
			// the section is unusable.
			if !(i == 0 && isBlank(str[p:o])) {
				blocks = append(blocks, ps.prose(str, p, o, base))
			}
			return ps.finishBlocks(blocks, name, h1, false)
		}
		if !(i == 0 && isBlank(str[p:o])) {
			blocks = append(blocks, ps.prose(str, p, o, base))
		}
		openEnd := strings.IndexByte(str[o:], '\n') + o + 1
		lb := ps.luaBlocks.alloc(len(ps.luaOpen))
		c := &lb.c
		c.Source = strings.TrimRight(str[openEnd:closeAt], "\r\n")
		c.SourceSpan = ps.span(base+openEnd, base+openEnd+len(c.Source))
		closeEnd := closeAt + 3
		if closeEnd < len(str) && str[closeEnd] == '\n' {
			closeEnd++
		}
		c.Span = ps.span(base+o, base+closeEnd)
		c.FirstLine, _ = ps.file.Position(c.Span.Start)
		c.FirstLine++
		lb.b = Block{Kind: LuaBlock, Chunk: c}
		blocks = append(blocks, &lb.b)
		p = closeEnd
	}
	if !isBlank(str[p:]) {
		blocks = append(blocks, ps.prose(str, p, len(str), base))
	}
	// As upstream, a section's fence errors are found before any of its
	// chunks is compiled; after one, the chunks hold swallowed text whose
	// Lua errors would only be noise.
	return ps.finishBlocks(blocks, name, h1, len(ps.prompt.Errors) == nerr)
}

// finishBlocks assigns labels (docs/language.md#chunk-labels) and the
// loop flag (docs/language.md#prose-blocks), then compiles the chunks in order.
func (ps *parser) finishBlocks(blocks []*Block, name string, h1, compile bool) []*Block {
	hasProse := false
	lastProse := -1
	for i, b := range blocks {
		if b.Kind == ProseBlock {
			hasProse = true
			lastProse = i
		}
	}
	kindOf := func(i int) labelKind {
		switch {
		case h1:
			return labelH1
		case i == 0:
			return labelPrologue
		case i == len(blocks)-1 && hasProse:
			return labelEpilog
		default:
			return labelLua
		}
	}
	// The labels the blocks use, built in one string.
	var used [labelKinds]bool
	middles := 0
	for i, b := range blocks {
		if b.Kind == LuaBlock {
			k := kindOf(i)
			used[k] = true
			if k == labelH1 || k == labelLua { // the labels ending in "` lua"
				middles++
			}
		}
	}
	var labels [labelKinds]string
	var sb strings.Builder
	size := 0
	for k, u := range used {
		if u {
			size += len(labelHeads[k]) + len(name) + len(labelTails[k])
		}
	}
	sb.Grow(size)
	var ends [labelKinds][2]int
	for k, u := range used {
		if u {
			ends[k][0] = sb.Len()
			sb.WriteString(labelHeads[k])
			sb.WriteString(name)
			sb.WriteString(labelTails[k])
			ends[k][1] = sb.Len()
		}
	}
	all := sb.String()
	for k, u := range used {
		if u {
			labels[k] = all[ends[k][0]:ends[k][1]]
		}
	}
	k := 0
	for i, b := range blocks {
		if b.Kind != LuaBlock {
			continue
		}
		k++
		kind := kindOf(i)
		b.Chunk.Label = labels[kind]
		b.Chunk.Name = b.Chunk.Label
		if middles > 1 && (kind == labelH1 || kind == labelLua) {
			b.Chunk.Name = fmt.Sprintf("%s #%d", b.Chunk.Label, k)
		}
	}
	if lastProse >= 0 {
		blocks[lastProse].Prose.LoopCapable = true
	}
	for _, b := range blocks {
		if b.Kind == LuaBlock && compile {
			ps.compile(b.Chunk)
		}
	}
	return blocks
}

// labelKind is a chunk label's form (docs/language.md#chunk-labels).
type labelKind int

const (
	labelH1 labelKind = iota
	labelPrologue
	labelEpilog
	labelLua
	labelKinds
)

var (
	labelHeads = [labelKinds]string{"H1 `", "section `", "section `", "section `"}
	labelTails = [labelKinds]string{"` lua", "` prologue", "` epilog", "` lua"}
)

// slab hands out zeroed values of T, allocated in groups of up to 4 KiB
// (a size class of Go's allocator, so no space is lost to rounding): a
// parse makes a section, a prose block and a chunk or two per section,
// and allocating them in small groups costs less than one by one.
type slab[T any] struct {
	free []T
	made int
}

// alloc returns a new zeroed T; total bounds how many the parse makes in
// all, so that no group is larger than needed.
func (s *slab[T]) alloc(total int) *T {
	if len(s.free) == 0 {
		var zero T
		s.free = make([]T, min(max(total-s.made, 1), max(4096/int(unsafe.Sizeof(zero)), 1)))
	}
	s.made++
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// luaBlock and proseBlock are a block and its content in one
// allocation (a parse makes one or two per section).
type luaBlock struct {
	b Block
	c Chunk
}

type proseBlock struct {
	b Block
	p Prose
}

// prose makes a trimmed prose block from str[a:b].
func (ps *parser) prose(str string, a, b, base int) *Block {
	seg := str[a:b]
	lead := len(seg) - len(strings.TrimLeftFunc(seg, isUnicodeSpace))
	t := strings.TrimFunc(seg, isUnicodeSpace)
	start := base + a + lead
	if ps.toFile == nil {
		ps.toFile = ps.off
	}
	// A section has at most one prose block more than it has chunks.
	pb := ps.proses.alloc(len(ps.luaOpen) + len(ps.headings) + 1)
	pb.p = Prose{Text: t, Span: ps.span(start, start+len(t)), bodyStart: start, toFile: ps.toFile}
	pb.b = Block{Kind: ProseBlock, Prose: &pb.p}
	return &pb.b
}
