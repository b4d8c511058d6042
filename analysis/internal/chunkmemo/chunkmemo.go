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
//     (compared on every use: the same Lua text may sit in a file with
//     other line breaks, or with other prose after it), and
//   - a fingerprint the pass builds of every other input it reads (the
//     chunk's kind, the value.Facts it was evaluated to, flow answers).
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

// Table holds a chunk's memo entries, one slot per key. It is the one
// entry chunkmemo keeps in Chunk.Memo, so that a pass finds its entry
// without scanning the chunk's other memos.
type Table struct {
	slots [maxKeys]atomic.Value
	// span is the file's text of the chunk's span (opener to closer)
	// as an analysis last saw it (Index.Span).
	span atomic.Pointer[string]
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
// per Program (memoised on its prompt): each chunk's table, global
// accesses and locals, by the chunk's place in Program.Chunks.
type Index struct {
	once   sync.Once
	tables []*Table
	// spans[i] is the text of chunk i's span, one string with its
	// table's span when they are equal (see Span).
	spans []string
	// Chunk i's globals are globals[gAt[i]:gAt[i+1]], its locals
	// locals[lAt[i]:lAt[i+1]].
	globals  []*program.Global
	locals   []*program.Local
	gAt, lAt []int32
}

type indexKey struct{ prog *program.Program }

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
	ix.spans = make([]string, n)
	at := make([]int32, 2*(n+1))
	ix.gAt, ix.lAt = at[:n+1], at[n+1:]
	ix.globals, ix.locals = prog.Globals, prog.Locals
	g, l := 0, 0
	for i, ch := range prog.Chunks {
		t := TableOf(ch.Chunk)
		ix.tables[i] = t
		if t != nil {
			// One comparison of the chunk's text per analysis, for
			// every pass whose part is the chunk (Span).
			text := prog.Prompt.File.Content[ch.Span.Start:ch.Span.End]
			if old := t.span.Load(); old != nil && *old == string(text) {
				ix.spans[i] = *old
			} else {
				s := string(text)
				t.span.Store(&s)
				ix.spans[i] = s
			}
		}
		// Records are in chunk order (program.Program).
		ix.gAt[i], ix.lAt[i] = int32(g), int32(l)
		for g < len(ix.globals) && prog.ChunkOf(ix.globals[g]) == ch {
			g++
		}
		for l < len(ix.locals) && prog.ChunkOf(ix.locals[l]) == ch {
			l++
		}
	}
	ix.gAt[n], ix.lAt[n] = int32(g), int32(l)
}

// Table returns the table of chunk i of the Program.
func (ix *Index) Table(i int) *Table { return ix.tables[i] }

// Span returns the file's text of chunk i's span, for Part.Text when
// the part's region is that span: the same string, compared by identity,
// for every analysis that saw the same text since it last changed.
func (ix *Index) Span(i int) string { return ix.spans[i] }

// Globals returns the global accesses of chunk i, in source order.
func (ix *Index) Globals(i int) []*program.Global {
	return ix.globals[ix.gAt[i]:ix.gAt[i+1]:ix.gAt[i+1]]
}

// Locals returns the locals of chunk i, in source order.
func (ix *Index) Locals(i int) []*program.Local {
	return ix.locals[ix.lAt[i]:ix.lAt[i+1]:ix.lAt[i+1]]
}

// entry is one memoised judgement of a part.
type entry[F comparable] struct {
	fp F
	// raw is the file's text of the region when the findings were made.
	raw string
	// diags have spans relative to the region's start.
	diags []analysis.Diagnostic
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
	// Text is the region's text as Index.Span gives it when the region
	// is a chunk's span ("" otherwise): an entry made with the same
	// string is found without comparing the text again.
	Text string
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
	return findings(key, p, func(report func(analysis.Diagnostic)) bool {
		judge(report)
		return true
	})
}

// FindingsIf is Findings for a judgement that may find that its
// findings depend on more than the part's fingerprint holds (a value
// the evaluator computed, a message naming an absolute line): judge
// returns false then, and its findings are returned without being
// memoised.
func FindingsIf[F comparable](key Key, p Part[F], judge func(report func(analysis.Diagnostic)) bool) []analysis.Diagnostic {
	return findings(key, p, judge)
}

func findings[F comparable](key Key, p Part[F], judge func(report func(analysis.Diagnostic)) bool) []analysis.Diagnostic {
	base := p.Region.Start
	raw := p.File.Content[p.Region.Start:p.Region.End]
	if p.Table != nil {
		if e, ok := p.Table.slots[key.slot].Load().(*entry[F]); ok && e.fp == p.FP && sameText(e.raw, p.Text, raw) {
			return rebase(e.diags, base)
		}
	}
	judged.Add(1)
	var diags []analysis.Diagnostic
	keep := judge(func(d analysis.Diagnostic) { diags = append(diags, d) })
	if p.Table == nil || !keep {
		return diags
	}
	rel, ok := relative(diags, p.Region)
	if !ok {
		return diags
	}
	text := p.Text
	if text == "" {
		text = string(raw)
	}
	p.Table.slots[key.slot].Store(&entry[F]{fp: p.FP, raw: text, diags: rel})
	return diags
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
