package parse

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
	"github.com/yuin/goldmark/ast"
	gmparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdParser is a CommonMark parser with every extension off
// (docs/language.md#markdown-dialect). goldmark
// parsers are safe for concurrent use once built.
// It is built on first use, not at process start.
var mdParser = sync.OnceValue(func() gmparser.Parser {
	return gmparser.NewParser(
		gmparser.WithBlockParsers(gmparser.DefaultBlockParsers()...),
		gmparser.WithInlineParsers(gmparser.DefaultInlineParsers()...),
		gmparser.WithParagraphTransformers(gmparser.DefaultParagraphTransformers()...),
	)
})

// blockParser is mdParser without inline parsers (see scanMarkdown).
var blockParser = sync.OnceValue(func() gmparser.Parser {
	return gmparser.NewParser(
		gmparser.WithBlockParsers(gmparser.DefaultBlockParsers()...),
		gmparser.WithParagraphTransformers(gmparser.DefaultParagraphTransformers()...),
	)
})

// atxStart reports whether line starts like an ATX heading: 1-6 '#'
// then a blank, a newline or the end (the regular expression
// ^#{1,6}([ \t]|\n|$), written out).
func atxStart(line []byte) bool {
	n := 0
	for n < len(line) && n < 7 && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return false
	}
	return n == len(line) || line[n] == ' ' || line[n] == '\t' || line[n] == '\n'
}

type parser struct {
	file   *source.File
	prompt *Prompt
	// prev is what the previous version's parse left to reuse (nil:
	// none); prompt.reuse is this parse's, filled as it goes.
	prev *Reuse
	// same, when not nil, is what the edit since prev's version left
	// alone (ParseEdited).
	same *same
	// chunkHint and regionHint are where the last lookups in prev found
	// their chunk and region (see at).
	chunkHint, regionHint, secHint int
	// breakCur and luaCur are markdownAt's cursors in breaks and luaOpen,
	// for offset mdAt.
	breakCur, luaCur, mdAt int
	// blockLists is what is left of the allocation copied sections'
	// block lists are cut from.
	blockLists []*Block
	listsMade  bool
	// fmLines is the number of file lines the frontmatter occupies.
	fmLines    int
	fmYAMLLine int

	body []byte
	// bodyStr is body as a string (sliced by split): the file's own bytes
	// when the body is its tail, else a copy.
	bodyStr string
	// bodyLines tells where each body line (0-based) starts.
	bodyLines lineTable
	// toFile is off as a func value, made once for every Prose.
	toFile func(int) int
	// fullInline makes scanMarkdown parse inlines everywhere; refs are the
	// body's link reference definitions.
	fullInline bool
	refs       []gmparser.Reference
	// wholeBody makes scanMarkdown parse the body in one piece instead of
	// by cached regions (see regions.go).
	wholeBody bool
	byRegions bool // set when the region scan succeeded
	// linear is set when the body is the file's tail byte for byte (no CR
	// anywhere after the frontmatter), so body offsets map to file offsets
	// by one addition.
	linear bool

	// The tree's nodes are allocated in groups (see slab).
	sections  slab[sectionHeading]
	luaBlocks slab[luaBlock]
	proses    slab[proseBlock]

	headings []*mdHeading
	breaks   []int // body offsets of thematic breaks (line starts)
	luaOpen  []int // body offsets of exact ```lua openers
	shared   []int // body offsets of exact ```lua shared openers
}

// lineTable lists where lines start: line k at starts[k]-base. The body
// of a file without CRs shares the file's own line table this way.
type lineTable struct {
	starts []int
	base   int
}

func (t lineTable) len() int     { return len(t.starts) }
func (t lineTable) at(k int) int { return t.starts[k] - t.base }

// firstLine is the line table of an empty body.
var firstLine = []int{0}

type mdHeading struct {
	level int
	name  string
	start int // body offset of the first heading line
	end   int // body offset after the last heading line's newline
	// nameA, nameB are the body offsets of the title text.
	nameA, nameB int
	setext       bool
}

// Parse parses a prompt file. It never fails and never panics on any
// input: problems are in Prompt.Errors, and the tree holds everything that
// could be recovered. The prompt keeps content (as its File does) and its
// texts are read from it without copying: content must not be modified
// afterwards.
func Parse(name string, content []byte) *Prompt {
	return parseWith(nil, nil, source.NewFile(name, content))
}

func parseWith(prev *Reuse, ch *Change, f *source.File) *Prompt {
	ps := &parser{file: f, prompt: &Prompt{File: f}, prev: prev}
	ps.prompt.join(prev, ch)
	if cache.on() {
		ps.prompt.reuse = &Reuse{size: len(f.Content), lineage: ps.prompt.lineage, version: ps.prompt.version}
	}
	ps.splitFrontmatter()
	ps.buildBody()
	if prev != nil && ch != nil {
		ps.unchanged(ch)
	}
	ps.scanMarkdown()
	ps.structure()
	if r := ps.prompt.reuse; r != nil {
		r.bodySize, r.bodyStart = len(ps.body), ps.prompt.BodyStart
		r.lines, r.breaks, r.luaOpen, r.starts = f.LineCount(), ps.breaks, ps.luaOpen, f.LineStarts()
	}
	sort.SliceStable(ps.prompt.Errors, func(i, j int) bool {
		return ps.prompt.Errors[i].Span.Start < ps.prompt.Errors[j].Span.Start
	})
	ps.done()
	return ps.prompt
}

// done drops what the parser holds of the previous version's parse. The
// parser outlives the parse: every prose block maps its offsets through
// it (toFile is its off). The previous version's Reuse holds that
// version's sections, whose prose blocks hold its parser, which held the
// Reuse of the version before: a document's every parse, with every
// analysis memoised on it, stayed reachable from the newest one.
func (ps *parser) done() {
	ps.prev, ps.same = nil, nil
	ps.blockLists = nil
}

func (ps *parser) errorf(code string, span source.Span, format string, args ...any) {
	if span.Start < 0 {
		span.Start = 0
	}
	if span.End < span.Start {
		span.End = span.Start
	}
	if n := len(ps.file.Content); span.End > n {
		span.End = n
		if span.Start > n {
			span.Start = n
		}
	}
	ps.prompt.Errors = append(ps.prompt.Errors, &Error{Code: code, Span: span, Message: fmt.Sprintf(format, args...)})
}

func (ps *parser) lineText(l int) string {
	return string(ps.file.Content[ps.file.LineStart(l):ps.file.LineEnd(l)])
}

func (ps *parser) lineSpan(l int) source.Span {
	return source.Span{Start: ps.file.LineStart(l), End: ps.file.LineEnd(l)}
}

// buildBody joins the lines after the frontmatter with LF
// (docs/language.md#text-and-lines).
func (ps *parser) buildBody() {
	f := ps.file
	first := ps.fmLines + 1
	ps.prompt.BodyStart = f.LineStart(first)
	if first > f.LineCount() {
		ps.prompt.BodyStart = len(f.Content)
		ps.bodyLines = lineTable{starts: firstLine}
		return
	}
	if tail := f.Content[ps.prompt.BodyStart:]; bytes.IndexByte(tail, '\r') < 0 {
		// Without CRs the joined lines are the tail itself, and the body's
		// lines are the file's from line first on. The tail is read as a
		// string in place (Parse's content is not modified afterwards).
		ps.bodyLines = lineTable{f.LineStarts()[first-1:], ps.prompt.BodyStart}
		ps.body, ps.bodyStr, ps.linear = tail, unsafe.String(unsafe.SliceData(tail), len(tail)), true
		return
	}
	ps.joinBody()
}

// joinBody builds the body line by line, dropping each line's CR.
func (ps *parser) joinBody() {
	f := ps.file
	first := ps.fmLines + 1
	lines := make([]int, 0, f.LineCount()-ps.fmLines)
	var b strings.Builder
	b.Grow(len(f.Content) - ps.prompt.BodyStart)
	for l := first; l <= f.LineCount(); l++ {
		lines = append(lines, b.Len())
		b.Write(f.Content[f.LineStart(l):f.LineEnd(l)])
		if l < f.LineCount() {
			b.WriteByte('\n')
		}
	}
	ps.bodyLines = lineTable{starts: lines}
	ps.bodyStr = b.String()
	ps.body = []byte(ps.bodyStr)
}

// bodyLineOf returns the 0-based body line holding body offset b.
func (ps *parser) bodyLineOf(b int) int {
	lo, hi := 0, ps.bodyLines.len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps.bodyLines.at(m) <= b {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// off maps a body offset to a file offset.
func (ps *parser) off(b int) int {
	if b < 0 {
		b = 0
	}
	if b > len(ps.body) {
		b = len(ps.body)
	}
	if ps.linear {
		return ps.prompt.BodyStart + b
	}
	k := ps.bodyLineOf(b)
	if k < 0 {
		k = 0
	}
	return ps.file.LineStart(ps.fmLines+1+k) + (b - ps.bodyLines.at(k))
}

func (ps *parser) span(a, b int) source.Span {
	return source.Span{Start: ps.off(a), End: ps.off(b)}
}

// lineStartAt returns the body offset of the start of the line holding b.
func (ps *parser) lineStartAt(b int) int {
	k := ps.bodyLineOf(b)
	if k < 0 {
		return 0
	}
	return ps.bodyLines.at(k)
}

// lineEndAt returns the body offset just after the newline of the line
// holding b (or the body end).
func (ps *parser) lineEndAt(b int) int {
	if b >= len(ps.body) {
		return len(ps.body)
	}
	i := bytes.IndexByte(ps.body[b:], '\n')
	if i < 0 {
		return len(ps.body)
	}
	return b + i + 1
}

func (ps *parser) bodyLine(b int) string {
	s := ps.lineStartAt(b)
	e := ps.lineEndAt(s)
	return strings.TrimSuffix(string(ps.body[s:e]), "\n")
}

// scanMarkdown runs the CommonMark block parser over the body and collects
// the three constructs that carry meaning: headings, thematic breaks and
// fenced code blocks (docs/language.md#markdown-dialect).
//
// The body is scanned by cached regions (regions.go); when that cannot be
// done exactly it is parsed in one piece. Block structure does not
// depend on inline content, and only heading
// titles need inlines, so the body is parsed without inline parsers; a
// title with inline syntax is parsed on its own (with the document's link
// reference definitions). A multi-line setext title, or one the
// stand-alone parse does not reproduce, sends the whole body through the
// full parser instead, as before.
func (ps *parser) scanMarkdown() {
	if len(ps.body) == 0 {
		return
	}
	if capped := ps.capNesting(); capped != nil {
		body, str := ps.body, ps.bodyStr
		ps.body, ps.bodyStr = capped, string(capped)
		defer func() { ps.body, ps.bodyStr = body, str }()
	}
	if !ps.fullInline && !ps.wholeBody {
		if ps.scanRegions() {
			ps.byRegions = true
			return
		}
		ps.headings, ps.breaks, ps.luaOpen, ps.shared, ps.refs = nil, nil, nil, nil, nil
	}
	if !ps.fullInline {
		ctx := gmparser.NewContext()
		doc := blockParser().Parse(text.NewReader(ps.body), gmparser.WithContext(ctx))
		ps.refs = ctx.References()
		if ps.collect(doc) {
			ps.sortMarkdown()
			return
		}
		ps.headings, ps.breaks, ps.luaOpen, ps.shared = nil, nil, nil, nil
		ps.fullInline = true
	}
	ps.collect(mdParser().Parse(text.NewReader(ps.body)))
	ps.sortMarkdown()
}

// collect walks doc; it returns false when a heading title needs the
// full inline parse of the body.
func (ps *parser) collect(doc ast.Node) bool {
	ok := true
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			if !ps.addHeading(n) {
				ok = false
				return ast.WalkStop, nil
			}
			return ast.WalkSkipChildren, nil
		case *ast.ThematicBreak:
			if p := n.Pos(); p >= 0 {
				ps.breaks = append(ps.breaks, ps.lineStartAt(p))
			}
		case *ast.FencedCodeBlock:
			if p := n.Pos(); p >= 0 {
				ls := ps.lineStartAt(p)
				switch ps.bodyLine(ls) {
				case "```lua":
					ps.luaOpen = append(ps.luaOpen, ls)
				case "```lua shared":
					ps.shared = append(ps.shared, ls)
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return ok
}

func (ps *parser) sortMarkdown() {
	sort.SliceStable(ps.headings, func(i, j int) bool { return ps.headings[i].start < ps.headings[j].start })
	for i := 1; i < len(ps.headings); i++ {
		if prev := ps.headings[i-1]; ps.headings[i].start < prev.end {
			prev.end = max(ps.headings[i].start, prev.start)
		}
	}
	sort.Ints(ps.breaks)
	sort.Ints(ps.luaOpen)
	sort.Ints(ps.shared)
}

// inlineSyntax holds the bytes that can start inline syntax (escapes,
// entities, emphasis, links, images, HTML, autolinks, code spans).
const inlineSyntax = "\\&*_[]!<`"

// headingName returns a heading's title. With the full parse the inlines
// are there; otherwise a plain one-line title is its trimmed text, and
// one with inline syntax is parsed on its own as an ATX heading with the
// body's link references. ok is false when that cannot be done exactly.
func (ps *parser) headingName(n *ast.Heading) (name string, ok bool) {
	if ps.fullInline {
		var b strings.Builder
		inlineText(&b, n, ps.body)
		return strings.TrimSpace(b.String()), true
	}
	lines := n.Lines()
	switch lines.Len() {
	case 0:
		return "", true
	case 1:
	default:
		return "", false
	}
	seg := lines.At(0)
	raw := seg.Value(ps.body)
	if !bytes.ContainsAny(raw, inlineSyntax) {
		return strings.TrimSpace(string(raw)), true
	}
	return ps.titleOf(raw)
}

// titleOf parses a one-line title with inline syntax on its own, as an
// ATX heading, with the body's link references.
func (ps *parser) titleOf(raw []byte) (string, bool) {
	src := append([]byte("# "), raw...)
	ctx := gmparser.NewContext()
	for _, r := range ps.refs {
		ctx.AddReference(r)
	}
	doc := mdParser().Parse(text.NewReader(src), gmparser.WithContext(ctx))
	h, isH := doc.FirstChild().(*ast.Heading)
	if !isH || h.NextSibling() != nil || h.Lines().Len() != 1 {
		return "", false
	}
	if hs := h.Lines().At(0); !bytes.Equal(hs.Value(src), raw) {
		return "", false
	}
	var b strings.Builder
	inlineText(&b, h, src)
	return strings.TrimSpace(b.String()), true
}

func (ps *parser) addHeading(n *ast.Heading) bool {
	h := &mdHeading{level: n.Level}
	p := n.Pos()
	lines := n.Lines()
	if p < 0 && lines.Len() > 0 {
		p = lines.At(0).Start
	}
	if p < 0 {
		return true
	}
	name, ok := ps.headingName(n)
	if !ok {
		return false
	}
	h.name = name
	// Tab expansion inside containers can put goldmark's position past
	// the real byte; clamp to the body.
	p = min(p, len(ps.body))
	h.start = ps.lineStartAt(p)
	last := p
	if lines.Len() > 0 {
		last = lines.At(lines.Len() - 1).Start
	}
	h.end = max(ps.lineEndAt(last), ps.lineEndAt(h.start))
	// ATX headings start with 1-6 '#' then a blank or the line end at
	// Pos; anything else is a setext heading, whose underline is the line
	// after its text.
	if !ps.isATX(p) {
		h.setext = true
		h.end = ps.lineEndAt(h.end)
	}
	if lines.Len() > 0 {
		a := lines.At(0)
		h.nameA, h.nameB = a.Start, a.Stop
	} else {
		h.nameA, h.nameB = h.start, h.start
	}
	ps.headings = append(ps.headings, h)
	return true
}

// inlineText builds a heading title from its inline content
// (docs/language.md#titles).
func inlineText(b *strings.Builder, n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			if !c.IsRaw() {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.Write(v)
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if tx, ok := t.(*ast.Text); ok {
					b.Write(tx.Segment.Value(src))
				} else if s, ok := t.(*ast.String); ok {
					b.Write(s.Value)
				}
			}
		case *ast.RawHTML:
			// dropped
		case *ast.AutoLink:
			b.Write(c.Label(src))
		default:
			inlineText(b, c, src)
		}
	}
}

// didYouMean is " (did you mean `x`?)" for the choice suggest.Closest
// picks, or "".
func didYouMean(got string, choices []string) string {
	if best := suggest.Closest(got, choices); best != "" {
		return fmt.Sprintf(" (did you mean `%s`?)", best)
	}
	return ""
}

// isATX reports whether the heading goldmark placed at p is an ATX
// heading: 1-6 '#' then a blank or the line end. When p does not sit on
// the '#' (tabs in containers shift goldmark's positions), the first '#'
// on the line after container markers decides.
func (ps *parser) isATX(p int) bool {
	end := ps.lineEndAt(p)
	if p < len(ps.body) && ps.body[p] == '#' {
		return atxStart(ps.body[p:end])
	}
	start := ps.lineStartAt(p)
	for i := start; i < end; i++ {
		switch c := ps.body[i]; {
		case c == '#':
			// After a container's marker comes white space or a `>`: a
			// `#` right after text (`0# x`) starts no heading.
			if i > start && ps.body[i-1] != ' ' && ps.body[i-1] != '\t' && ps.body[i-1] != '>' {
				return false
			}
			return atxStart(ps.body[i:end])
		case c == ' ' || c == '\t' || c == '>' || c == '*' || c == '-' || c == '+' || c == '.' || c == ')' || (c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return false
}
