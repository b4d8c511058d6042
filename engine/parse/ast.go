// Package parse turns a PromptForge prompt file into a tree: frontmatter,
// the H1 preamble, the section tree and each section's blocks (compiled Lua
// chunks and prose), following the format of docs/language.md. The parser
// executes nothing, never panics on user input and, unlike upstream, keeps
// going after an error so that a broken file still yields a tree plus all
// of its errors.
//
// Parsing is memoised by content for editors, which re-parse the whole
// buffer after each keystroke: compiled Lua chunks by label and source
// (cache.go, with Chunk.Memo for facts analyses derive from a chunk),
// the Markdown scan by region (regions.go) and prose placeholders by text
// (prosetemplate.go). The caches are bounded, and every memo is tested
// against the uncached computation.
//
// Section visibility and lookup (resolve.go) live here, not in the
// runtime, so that the analyzer and the server resolve `jump "## Name"`
// exactly as a run does without linking the runtime.
package parse

import (
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
	"github.com/yuin/gopher-lua/ast"
)

// Error codes of parse diagnostics (docs/language.md#parse-errors).
const (
	CodeFrontmatter = "frontmatter"
	CodeStructure   = "structure"
	CodeFence       = "fence"
	CodeList        = "list"
	CodeLuaSyntax   = "lua-syntax"
)

// Error is one parse problem. Span is always inside the file.
type Error struct {
	Code    string
	Span    source.Span
	Message string
}

func (e *Error) Error() string { return e.Message }

// Prompt is a parsed prompt file.
type Prompt struct {
	File *source.File
	// Frontmatter is nil when the file does not begin with a --- line.
	Frontmatter *Frontmatter
	// Body is the text after the frontmatter; BodyStart its file offset.
	BodyStart int
	// H1 is nil when the file has no H1.
	H1 *Heading
	// Title is the H1's normalised title.
	Title string
	// H1Region is the text from the end of the H1 line to the next heading.
	H1Region source.Span
	// H1Live is the live part of the H1 region (up to its first break).
	H1Live source.Span
	// Shared is the `lua shared` library chunk, if any.
	Shared *Chunk
	// H1Blocks are the live H1 blocks (shared fence excluded).
	H1Blocks []*Block
	// Description is the non-empty H1 prose texts joined by a blank line.
	Description string
	// Sections are the top-level (H2) sections.
	Sections []*Section
	// Errors are all parse errors, in file order of discovery.
	Errors []*Error

	memo sync.Map
	// reuse is what a parse of the next version may reuse (Reuse).
	reuse *Reuse
	// lineage and version place the parse among its document's
	// versions (Lineage).
	lineage *Lineage
	version uint64
	// addrs indexes the sections by parent, level and name for Resolve.
	addrsOnce sync.Once
	addrs     map[addrKey][]*Section
}

// Memo returns the value stored under key by SetMemo on this prompt, or
// nil. Models derived from the whole parse (the analyzer's program model,
// which the language server's navigation shares) are kept here so that
// every user of one parse builds them once. A stored value must be
// immutable and derived from the prompt alone.
func (p *Prompt) Memo(key any) any {
	v, _ := p.memo.Load(key)
	return v
}

// SetMemo stores v under key unless a value is already there, and
// returns the stored value (so concurrent builders agree on one).
func (p *Prompt) SetMemo(key, v any) any {
	got, _ := p.memo.LoadOrStore(key, v)
	return got
}

// Frontmatter is the YAML block between the first two --- lines.
type Frontmatter struct {
	// Span covers both delimiter lines and the YAML between them.
	Span source.Span
	// YAML covers the text between the delimiters.
	YAML   source.Span
	Closed bool
	// Fields lists top-level keys in order, with their positions.
	Fields []*Field

	Name, Description string
	// Version is the promptforge value when present and a valid integer.
	Version *uint32
	// MaxToolIterations is set when present and valid.
	MaxToolIterations *int64
	Input, Output     *IOSpec
}

// Field is one top-level frontmatter key.
type Field struct {
	Key       string
	KeySpan   source.Span
	ValueSpan source.Span
	// Value is the scalar's literal text ("" for non-scalars).
	Value string
	// Quoted is true for a quoted scalar; Scalar is false for sequences and
	// mappings.
	Quoted, Scalar bool
	// Null is true for an unquoted null, ~ or empty value.
	Null bool
	// Children holds the keys of a mapping value (input/output).
	Children []*Field
}

// Field returns the top-level field named key, or nil.
func (fm *Frontmatter) Field(key string) *Field {
	if fm == nil {
		return nil
	}
	for _, f := range fm.Fields {
		if f.Key == key {
			return f
		}
	}
	return nil
}

// IOSpec is the input/output frontmatter value.
type IOSpec struct {
	Path, Description string
}

// Heading is a Markdown heading.
type Heading struct {
	Level int
	// Name is the normalised title (docs/language.md#titles).
	Name string
	// Span covers the heading's lines including the trailing line break.
	Span source.Span
	// NameSpan covers the raw title text on the (first) heading line.
	NameSpan source.Span
	Setext   bool
}

// Section is an H2..H6 section.
type Section struct {
	Heading *Heading
	Name    string
	Level   int
	Parent  *Section
	// Children are the direct child sections.
	Children []*Section
	// Content is the text between the heading and the next heading.
	Content source.Span
	// Live is the part of Content that runs (after the thematic-break rules of
	// docs/language.md#thematic-breaks).
	Live source.Span
	// OffWalk is true when the first content is a thematic break.
	OffWalk bool
	// Marker is the off-walk marker's span, when OffWalk.
	Marker source.Span
	// Dead is the dead region (comment boundary to end of content), or an
	// empty span at Content.End when nothing is dead.
	Dead source.Span
	// Blocks alternate between Lua chunks and prose.
	Blocks []*Block
	// Items are the list items when the section is a list section.
	Items  []*Item
	IsList bool
}

// Address returns the section's heading string ("## Name").
func (s *Section) Address() string {
	b := make([]byte, 0, s.Level+1+len(s.Name))
	for i := 0; i < s.Level; i++ {
		b = append(b, '#')
	}
	return string(append(append(b, ' '), s.Name...))
}

// Item is one list-section item.
type Item struct {
	Text string
	Span source.Span
}

// BlockKind tells Lua chunks from prose.
type BlockKind int

const (
	LuaBlock BlockKind = iota
	ProseBlock
)

// Block is a Lua chunk or a prose block.
type Block struct {
	Kind  BlockKind
	Chunk *Chunk // Kind == LuaBlock
	Prose *Prose // Kind == ProseBlock
}

// Span returns the block's span.
func (b *Block) Span() source.Span {
	if b.Kind == LuaBlock {
		return b.Chunk.Span
	}
	return b.Prose.Span
}

// Chunk is a compiled Lua fence.
type Chunk struct {
	// Source is the Lua text between opener and closer (trailing newlines
	// removed).
	Source string
	// Label is the chunk's name in diagnostics (docs/language.md#chunk-labels).
	Label string
	// Name is the chunk name given to gopher-lua, so it is what Lua error
	// messages carry ("Name:line:"). It equals Label except for the middle
	// chunks of a section, whose labels repeat; those get " #k" (k counting
	// the section's chunks from 1) so an error maps to exactly one chunk.
	Name string
	// FirstLine is the file line of the first Lua line (opener line + 1).
	FirstLine int
	// Span covers opener to closer lines; SourceSpan the Lua text.
	Span, SourceSpan source.Span
	Shared           bool
	// AST is nil when the chunk has a syntax error. The runtime compiles
	// it to bytecode (engine/run). Cached ASTs are shared between parses:
	// treat as immutable.
	AST []ast.Stmt
	res *chunkResult
}

// Prose is a prose block: raw Markdown, trimmed.
type Prose struct {
	Text string
	// Span covers the trimmed text.
	Span source.Span
	// LoopCapable is true for the last prose block of a section (or H1).
	LoopCapable bool

	bodyStart int // body offset of Text, for CRLF-safe mapping
	// toFile maps a body offset to a file offset.
	toFile func(int) int
	// tmpl is TextTemplate's cached parse once looked up (every analyzer
	// that reads placeholders asks).
	tmpl atomic.Pointer[textTemplate]
}

// FileOffset maps a byte index into Text to a file offset. Text comes from
// the body, where CRLF line breaks lost their CR, so the mapping is not a
// plain addition in CRLF files.
func (pr *Prose) FileOffset(i int) int {
	if pr.toFile == nil {
		return pr.Span.Start + i
	}
	return pr.toFile(pr.bodyStart + i)
}

// Template parses the prose's {{ }} placeholders; every span in the result
// is a file offset.
func (pr *Prose) Template() (*template.Template, *template.Error) {
	t, err := pr.textTemplateCopy()
	pr.toFileOffsets(t, err)
	return t, err
}

// toFileOffsets turns the spans of a parse of pr.Text (offsets into the
// text) into file offsets, in place.
func (pr *Prose) toFileOffsets(t *template.Template, err *template.Error) {
	fix := func(s *source.Span) {
		s.Start, s.End = pr.FileOffset(s.Start), pr.FileOffset(s.End)
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		fix(&n.Span)
		fix(&n.PathSpan)
		for j := range n.Segments {
			fix(&n.Segments[j].Span)
		}
	}
	if err != nil {
		fix(&err.Span)
	}
}
