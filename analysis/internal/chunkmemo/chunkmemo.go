// Package chunkmemo memoises a pass's findings about one part of a
// prompt (a chunk, or a chunk with the prose after it) on the parser's
// chunk, so that after an edit elsewhere the pass reuses them instead of
// judging the part again.
//
// A memo entry is keyed on what the findings really depend on:
//
//   - the parser's chunk (its label and Lua text: the entry lives in
//     the parse cache's entry for it, in the one Table chunkmemo keeps
//     in Chunk.Memo),
//   - the file's bytes of the region the findings may point into
//     (the same Lua text may sit in a file with other line breaks, or
//     with other prose after it): a chunk's span (Index.Span) or a
//     section's chunks (Index.Region) is compared with what an analysis
//     last saw once per analysis, however many passes ask, and then by
//     identity; a few bytes around it (Part.Core) by content, and
//   - a fingerprint the pass builds of every other input it reads (the
//     chunk's kind, the value.Facts it was evaluated to, flow answers).
//
// A pass judges its parts through a Run (run.go), which first finds a
// part among the previous analysis's of the document by its position in
// the bytes the two versions share (parse.Lineage), and looks it up in
// its chunk's table only when it is not there.
//
// Findings are stored with spans relative to the region's start and
// re-based when the region moved. A finding whose span (or related
// span, or fix) leaves the region cannot be re-based: a part with one is
// judged again on every analysis.
//
// The fingerprint is kept for as long as the parse cache keeps the
// chunk, which outlives the analysis that made it: it must hold nothing
// of one analysis (no *program.Program, *program.Chunk, *flow.Result or
// *parse.Section, nor anything pointing at them), only values and
// objects memoised on chunks themselves (value.Facts, syntax trees).
// TestEditsKeepNoProgram (analysis/checker) holds the whole checker to
// that.
package chunkmemo

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Key names one kind of memo (one per pass and part): a slot of the
// chunk's table.
type Key struct {
	slot int
	name string
}

// maxKeys bounds the number of keys (the slots of a table).
const maxKeys = 16

var nKeys atomic.Int32

// NewKey returns a new key of the memo named name (call it once, at
// package initialisation).
func NewKey(name string) Key {
	n := int(nKeys.Add(1)) - 1
	if n >= maxKeys {
		panic(fmt.Sprintf("chunkmemo: more than %d keys (%s)", maxKeys, name))
	}
	return Key{n, name}
}

// inlineKeys is the number of slots a table holds inline: the keys the
// passes define today. Every open document keeps a table per chunk and
// the collector scans it whole, so the slots of keys beyond them (none
// yet) are made on first use.
const inlineKeys = 11

// Table holds a chunk's memo entries, one slot per key. It is the one
// entry chunkmemo keeps in Chunk.Memo, so that a pass finds its entry
// without scanning the chunk's other memos.
type Table struct {
	slots [inlineKeys]atomic.Value
	more  atomic.Pointer[[maxKeys - inlineKeys]atomic.Value]
	// span is the file's text of the chunk's span (opener to closer)
	// as an analysis last saw it (Index.Span), region that from its
	// start to the end of a later chunk (Index.Region).
	span, region atomic.Pointer[string]
}

// Value returns the value stored under key by SetValue on the table
// (nil when none, or t nil): a fact a pass derives from the chunk's
// syntax tree alone, found in O(1) where Chunk.Memo scans the chunk's
// memos. A key is used either for findings or for values, not both.
func (t *Table) Value(key Key) any {
	if t == nil {
		return nil
	}
	if key.slot < inlineKeys {
		return t.slots[key.slot].Load()
	}
	return t.loadMore(key)
}

// SetValue stores v under key (always of one type per key; nothing for
// t nil). The value lives as long as the parse cache keeps the chunk
// and must hold nothing of one analysis (see the package comment).
func (t *Table) SetValue(key Key, v any) {
	if t != nil {
		t.slot(key).Store(v)
	}
}

// loadMore returns the value in the slot of a key beyond the inline
// slots (nil when none). The inline slots are read in place (Value,
// findings): a call for each would cost more than the read.
func (t *Table) loadMore(key Key) any {
	if m := t.more.Load(); m != nil {
		return m[key.slot-inlineKeys].Load()
	}
	return nil
}

// slot returns key's slot, for a store.
func (t *Table) slot(key Key) *atomic.Value {
	if key.slot < inlineKeys {
		return &t.slots[key.slot]
	}
	return t.slotMore(key)
}

// slotMore is slot for a key beyond the inline slots.
func (t *Table) slotMore(key Key) *atomic.Value {
	m := t.more.Load()
	if m == nil {
		t.more.CompareAndSwap(nil, new([maxKeys - inlineKeys]atomic.Value))
		m = t.more.Load()
	}
	return &m[key.slot-inlineKeys]
}

type tableKey struct{}

// TableOf returns chunk c's table (nil for a chunk with a syntax error,
// which keeps no memo).
func TableOf(c *parse.Chunk) *Table {
	if c == nil || !c.OK() {
		return nil
	}
	if t, ok := c.Memo(tableKey{}).(*Table); ok {
		return t
	}
	t := &Table{}
	c.SetMemo(tableKey{}, t) // a concurrent first use may replace it: a miss, no harm
	return t
}

// Index is what the passes of one analysis look up per chunk, made once
// per Program (memoised on its prompt): each chunk's table and text by
// the chunk's place in Program.Chunks, and its global accesses and
// locals (the ranges Program set for each chunk when it was built).
type Index struct {
	once   sync.Once
	tables []*Table
	// spans[i] is the text of chunk i's span, one string with its
	// table's span when they are equal (see Span), made on first use.
	spans []atomic.Pointer[string]
	// regions[i] is the text Region last gave for chunks from i (in
	// this analysis): its length tells which chunk it ends with.
	regions []atomic.Pointer[string]
	prog    *program.Program
	// lineage and version are the prompt's (parse.Prompt.Lineage): the
	// runs of its passes (Run) keep their parts there, by position, for
	// the next analysis of the document.
	lineage *parse.Lineage
	version uint64
	runs    *lineageRuns
}

type indexKey struct{ prog *program.Program }

type onceKey struct{}

// Once marks p as analysed once only (analysis.Config.Once): its index
// gives every chunk a nil table, so the passes judge every part and store
// nothing (a cold analysis finds nothing memoised anyway).
func Once(p *parse.Prompt) { p.SetMemo(onceKey{}, true) }

// IndexOf returns prog's index.
func IndexOf(prog *program.Program) *Index {
	key := indexKey{prog}
	ix, ok := prog.Prompt.Memo(key).(*Index)
	if !ok {
		ix = prog.Prompt.SetMemo(key, &Index{}).(*Index)
	}
	ix.once.Do(func() { ix.build(prog) })
	return ix
}

func (ix *Index) build(prog *program.Program) {
	n := len(prog.Chunks)
	ix.tables = make([]*Table, n)
	ix.spans = make([]atomic.Pointer[string], n)
	ix.regions = make([]atomic.Pointer[string], n)
	ix.prog = prog
	if once, _ := prog.Prompt.Memo(onceKey{}).(bool); once {
		return
	}
	for i, ch := range prog.Chunks {
		ix.tables[i] = TableOf(ch.Chunk)
	}
	if l, v := prog.Prompt.Lineage(); l != nil {
		ix.lineage, ix.version = l, v
		ix.runs = runsOf(l)
	}
}

// intern returns text as a string: the one *p holds when equal, else a
// copy, which it stores in *p.
func intern(p *atomic.Pointer[string], text []byte) *string {
	if old := p.Load(); old != nil && *old == string(text) {
		return old
	}
	s := string(text)
	p.Store(&s)
	return &s
}

// Stable returns s, or the equal string *last holds, and keeps it in
// *last: a pass that builds a string of its fingerprint per analysis
// (what the H1 declares) passes it here, so that every analysis with
// the same one holds the same string and a memo look-up compares it by
// identity, not by content.
func Stable(last *atomic.Pointer[string], s string) string {
	if old := last.Load(); old != nil && *old == s {
		return *old
	}
	last.Store(&s)
	return s
}

// Table returns the table of chunk i of the Program.
func (ix *Index) Table(i int) *Table { return ix.tables[i] }

// Span returns the file's text of chunk i's span, for Part.Text when
// the part's region is that span: the same string, compared by identity,
// for every analysis that saw the same text since it last changed. It
// is "" when chunk i has no table. The text is compared with what the
// table last saw once per analysis, on first use: a pass that finds its
// parts by position (Run, Part.Chunks) asks only for changed ones.
func (ix *Index) Span(i int) string {
	if s := ix.spans[i].Load(); s != nil {
		return *s
	}
	t := ix.tables[i]
	if t == nil {
		return ""
	}
	ch := ix.prog.Chunks[i]
	text := intern(&t.span, ix.prog.Prompt.File.Content[ch.Span.Start:ch.Span.End])
	ix.spans[i].Store(text) // a concurrent first use may replace it: the same text
	return *text
}

// Chunks names chunks lo to hi (inclusive) of the Program for
// Part.Chunks: a part whose core is their text (Span, Region).
func (ix *Index) Chunks(lo, hi int) Chunks { return Chunks{ix, lo, hi} }

// Chunks is a run of chunks of one analysis, whose text (Index.Region)
// a Part's core is (Part.Chunks).
type Chunks struct {
	ix     *Index
	lo, hi int
}

// text returns the chunks' text, Index.Region's.
func (c Chunks) text() string {
	if c.ix == nil {
		return ""
	}
	return c.ix.Region(c.lo, c.hi)
}

// Region returns the file's text from chunk lo's span's start to chunk
// hi's span's end, for Part.Text when the part's region is that (a
// section's own chunks): like Span, the same string for every analysis
// that saw the same text since it last changed, compared with the
// previous one once per analysis however many passes ask, and copied
// once per change, not once per pass. It is "" when chunk lo has no
// table.
func (ix *Index) Region(lo, hi int) string {
	if lo == hi {
		return ix.Span(lo)
	}
	start, end := ix.prog.Chunks[lo].Span.Start, ix.prog.Chunks[hi].Span.End
	if r := ix.regions[lo].Load(); r != nil && len(*r) == end-start {
		return *r
	}
	t := ix.tables[lo]
	if t == nil {
		return ""
	}
	text := intern(&t.region, ix.prog.Prompt.File.Content[start:end])
	ix.regions[lo].Store(text) // a concurrent first use may replace it: the same text
	return *text
}

// Globals returns the global accesses of chunk i, in source order.
func (ix *Index) Globals(i int) []*program.Global {
	return ix.prog.GlobalsIn(ix.prog.Chunks[i])
}

// Locals returns the locals of chunk i, in source order.
func (ix *Index) Locals(i int) []*program.Local {
	return ix.prog.LocalsIn(ix.prog.Chunks[i])
}

// entry is one memoised judgement of a part.
type entry[F comparable] struct {
	fp F
	// raw is the file's text of the part's core (Part.Core) when the
	// findings were made, margins that of the region around it (pre
	// bytes of it before the core).
	raw     string
	margins string
	pre     int
	// diags have spans relative to the region's start.
	diags []analysis.Diagnostic
}

// diagsRef returns the entry's findings by reference (nil for none):
// what a Run's record of the part keeps (an entry is never changed).
func (e *entry[F]) diagsRef() *[]analysis.Diagnostic {
	if len(e.diags) == 0 {
		return nil
	}
	return &e.diags
}

// sameMargins reports whether the entry's margins are pre and post.
func (e *entry[F]) sameMargins(pre, post []byte) bool {
	if e.pre != len(pre) || len(e.margins) != len(pre)+len(post) {
		return false
	}
	return len(e.margins) == 0 || e.margins[:len(pre)] == string(pre) && e.margins[len(pre):] == string(post)
}

// Part is one part of a prompt a pass judges on its own, with F the
// type of its fingerprint.
type Part[F comparable] struct {
	// Table is the memo of the chunk that carries it (Index.Table,
	// TableOf); nil means no memo.
	Table *Table
	// File is the prompt's text; Region the bytes findings may point
	// into.
	File   *source.File
	Region source.Span
	// Core is the part of the region Text is the text of (the whole
	// region when zero); the rest of the region (a few bytes around a
	// chunk, the prose after it) is compared by content.
	Core source.Span
	// Text is the core's text as Index.Span or Index.Region gives it
	// ("" otherwise): an entry made with the same string is found
	// without comparing the text again.
	Text string
	// Chunks, when Text is "", names the chunks whose text the core is
	// (Index.Chunks): Text is then Index.Region's, asked for only when
	// a Run does not find the part by its position.
	Chunks Chunks
	// FP is the fingerprint of every input other than the chunk's text
	// and the region's bytes (see the package comment).
	FP F
}

// Findings returns the findings judge reports about part p: those of an
// earlier judgement of the same part when the memo under key holds one
// for the same region text and fingerprint, else judge's, memoised when
// every span of them lies in the region. The spans returned are the
// file's.
//
// On a hit it allocates nothing but the re-based findings.
func Findings[F comparable](key Key, p Part[F], judge func(report func(analysis.Diagnostic))) []analysis.Diagnostic {
	diags, _, _ := findings(key, &p, func(report func(analysis.Diagnostic)) bool {
		judge(report)
		return true
	})
	return diags
}

// FindingsIf is Findings for a judgement that may find that its
// findings depend on more than the part's fingerprint holds (a value
// the evaluator computed, a message naming an absolute line): judge
// returns false then, and its findings are returned without being
// memoised.
func FindingsIf[F comparable](key Key, p Part[F], judge func(report func(analysis.Diagnostic)) bool) []analysis.Diagnostic {
	diags, _, _ := findings(key, &p, judge)
	return diags
}

// findings returns the findings about part p (file spans) and, when
// they are memoised (kept), the same relative to the region's start, as
// the memo entry holds them (nil for none).
func findings[F comparable](key Key, p *Part[F], judge func(report func(analysis.Diagnostic)) bool) ([]analysis.Diagnostic, *[]analysis.Diagnostic, bool) {
	base := p.Region.Start
	c := p.File.Content
	raw := c[p.Region.Start:p.Region.End]
	var pre, post []byte
	if p.Core != (source.Span{}) {
		raw, pre, post = c[p.Core.Start:p.Core.End], c[p.Region.Start:p.Core.Start], c[p.Core.End:p.Region.End]
	}
	text := p.Text
	if p.Table != nil && text == "" {
		text = p.Chunks.text()
	}
	if p.Table != nil {
		var cur any
		if key.slot < inlineKeys {
			cur = p.Table.slots[key.slot].Load()
		} else {
			cur = p.Table.loadMore(key)
		}
		if e, ok := cur.(*entry[F]); ok && e.fp == p.FP && sameText(e.raw, text, raw) && e.sameMargins(pre, post) {
			return rebase(e.diags, base), e.diagsRef(), true
		}
	}
	judged.Add(1)
	var diags []analysis.Diagnostic
	keep := judge(func(d analysis.Diagnostic) { diags = append(diags, d) })
	if p.Table == nil || !keep {
		return diags, nil, false
	}
	rel, ok := relative(diags, p.Region)
	if !ok {
		return diags, nil, false
	}
	e := &entry[F]{fp: p.FP, raw: text, pre: len(pre), diags: rel}
	if e.raw == "" {
		e.raw = string(raw)
	}
	if len(pre)+len(post) > 0 {
		e.margins = string(pre) + string(post)
	}
	p.Table.slot(key).Store(e)
	return diags, e.diagsRef(), true
}

// Report reports through pass the findings of judge about part p, as
// Findings gives them: judge reports through pass.Report as a pass
// always does, and while it runs pass.Report feeds the memo.
func Report[F comparable](pass *analysis.Pass, key Key, p Part[F], judge func()) {
	report := pass.Report
	for _, d := range Findings(key, p, func(memo func(analysis.Diagnostic)) {
		pass.Report = memo
		defer func() { pass.Report = report }()
		judge()
	}) {
		report(d)
	}
}

// ReportIf is Report with FindingsIf: judge returns false when its
// findings must not be memoised.
func ReportIf[F comparable](pass *analysis.Pass, key Key, p Part[F], judge func() bool) {
	report := pass.Report
	for _, d := range FindingsIf(key, p, func(memo func(analysis.Diagnostic)) bool {
		pass.Report = memo
		defer func() { pass.Report = report }()
		return judge()
	}) {
		report(d)
	}
}

// judged counts the parts judged (not found in a memo) since the
// process started.
var judged atomic.Int64

// Judged returns the number of parts Findings has judged rather than
// found memoised, for tests of how much an edit costs.
func Judged() int64 { return judged.Load() }

// sameText reports whether an entry's text old is the region's, raw
// (text when the Index gave it): the same string by identity, else by
// content.
func sameText(old, text string, raw []byte) bool {
	if text != "" && len(old) == len(text) && unsafe.StringData(old) == unsafe.StringData(text) {
		return true
	}
	return old == string(raw)
}

// relative returns diags with spans relative to region's start, or false
// when one leaves the region.
func relative(diags []analysis.Diagnostic, region source.Span) ([]analysis.Diagnostic, bool) {
	if len(diags) == 0 {
		return nil, true
	}
	in := func(s source.Span) bool { return region.Start <= s.Start && s.End <= region.End && s.Start <= s.End }
	for _, d := range diags {
		if !in(d.Span) {
			return nil, false
		}
		for _, r := range d.Related {
			if !in(r.Span) {
				return nil, false
			}
		}
		for _, f := range d.SuggestedFixes {
			for _, e := range f.Edits {
				if !in(e.Span) {
					return nil, false
				}
			}
		}
	}
	return rebase(diags, -region.Start), true
}

// rebase returns copies of diags with every span moved by delta.
func rebase(diags []analysis.Diagnostic, delta int) []analysis.Diagnostic {
	if len(diags) == 0 {
		return nil
	}
	out := make([]analysis.Diagnostic, len(diags))
	move := func(s source.Span) source.Span { return source.Span{Start: s.Start + delta, End: s.End + delta} }
	for i, d := range diags {
		d.Span = move(d.Span)
		if len(d.Related) > 0 {
			rel := make([]analysis.RelatedInformation, len(d.Related))
			for j, r := range d.Related {
				r.Span = move(r.Span)
				rel[j] = r
			}
			d.Related = rel
		}
		if len(d.SuggestedFixes) > 0 {
			fixes := make([]analysis.SuggestedFix, len(d.SuggestedFixes))
			for j, f := range d.SuggestedFixes {
				edits := make([]analysis.TextEdit, len(f.Edits))
				for k, e := range f.Edits {
					e.Span = move(e.Span)
					edits[k] = e
				}
				f.Edits = edits
				fixes[j] = f
			}
			d.SuggestedFixes = fixes
		}
		out[i] = d
	}
	return out
}
