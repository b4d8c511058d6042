package neardup

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/yuin/gopher-lua/ast"
)

// Code is the diagnostic code (documented in docs/codes.md).
const Code = "near-duplicate-tools"

// Analyzer reports near-duplicate tools.
var Analyzer = &analysis.Analyzer{
	Name:     "neardup",
	Doc:      "report tools available to one section whose model-facing descriptions are near-duplicates",
	Codes:    []*analysis.Code{{Name: Code, Severity: analysis.Error, Summary: "Two tools available to one section have near-duplicate model-facing descriptions (similarity >= 0.90); the run refuses the section."}},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

// avail is one tool available to a section.
type avail struct {
	alias string
	desc  string
	known bool
	// n is desc's normalised rune length (when known).
	n int
	// lit (in chunk) is the literal where the tool became available with
	// this description; its span is looked up only for a report.
	chunk *program.Chunk
	lit   *ast.StringExpr
	// always marks an always tool not changed in the section.
	always bool
}

// bind is one bound alias: its index among the binds and its bind
// override.
type bind struct {
	id       int
	override string
	has      bool
	n        int // override's normalised rune length, -1 until needed
	// always is set once the alias is an always tool.
	always bool
}

// nOverride returns the bind override's normalised rune length.
func (b *bind) nOverride() int {
	if b.n < 0 {
		b.n = normLen(b.override)
	}
	return b.n
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	if len(prog.Sections) == 0 {
		return nil, nil // near-duplicates are checked only in sections
	}
	// H1: bind overrides, then always (with its override replacing the
	// bind override).
	binds := map[string]*bind{}
	var always []avail
	var alwaysID []int // alwaysID[k] is always[k]'s bind id
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind":
			a, _, ok := strArg(c, 0)
			if !ok || binds[a] != nil {
				continue
			}
			b := &bind{id: len(binds), n: -1}
			b.override, _, b.has = strArg(c, 2)
			binds[a] = b
		case "tools.always":
			a, lit, ok := strArg(c, 0)
			b := binds[a]
			if !ok || b == nil || b.always {
				continue
			}
			b.always = true
			t := avail{alias: a, chunk: prog.ChunkOf(c), lit: lit, always: true}
			if o, _, ok := strArg(c, 1); ok {
				t.desc, t.known, t.n = o, true, normLen(o)
			} else if b.has {
				t.desc, t.known, t.n = b.override, true, b.nOverride()
			}
			always = append(always, t)
			alwaysID = append(alwaysID, b.id)
		}
	}
	r := &reporter{pass: pass, prog: prog, sim: map[[2]string]float64{}}
	// Pairs of always tools clash in every section: report once.
	r.pairs(always, false, nil)

	// Per section, the scope is rebuilt in one reused slice; where[id]
	// is the scope index of bound alias id when stamp[id] is the
	// section's number.
	var scope, locals []avail
	var lits []*ast.StringExpr
	var recs []*bind
	where := make([]int, len(binds))
	stamp := make([]int, len(binds))
	// A section's findings depend on its name and own blocks, the
	// shared library's calls (its parse identity) and the H1's binds
	// and always tools (h1): memoised on the section's first chunk
	// (chunkmemo).
	fp := sectionFP{h1: chunkmemo.Stable(&lastH1, h1Key(prog))}
	if prog.Shared != nil {
		fp.shared = prog.Shared.Key()
	}
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[sectionFP](ix, sectionKey)
	defer run.Done()
	// judge judges section unit u, the gen'th (one closure for all
	// sections: a closure per section made each one's variables escape).
	judge := func(gen int, u *program.Unit) {
		scope = append(scope[:0], always...)
		for k, id := range alwaysID {
			where[id], stamp[id] = k, gen
		}
		locals = locals[:0]
		for _, c := range u.Calls {
			if c.Where == api.H1 {
				continue
			}
			switch c.Canonical() {
			case "tools.add":
				override, _, hasOverride := strArg(c, 1)
				hasOverride = hasOverride && !prog.OldMultiAdd(c) // tools.add("a", "b"): two aliases
				lits = prog.AppendAddAliases(c, lits[:0])
				recs = recs[:0]
				for _, lit := range lits {
					recs = append(recs, binds[lit.Value])
				}
				if !allBound(recs) {
					continue // tools.add is atomic: one bad alias adds nothing
				}
				nOverride := -1
				for k, lit := range lits {
					b := recs[k]
					var t *avail
					if stamp[b.id] == gen {
						t = &scope[where[b.id]]
					} else {
						scope = append(scope, avail{alias: lit.Value, chunk: prog.ChunkOf(c), lit: lit})
						where[b.id], stamp[b.id] = len(scope)-1, gen
						t = &scope[len(scope)-1]
						if b.has {
							t.desc, t.known, t.n = b.override, true, b.nOverride()
						}
					}
					if hasOverride {
						if nOverride < 0 {
							nOverride = normLen(override)
						}
						t.desc, t.known, t.n, t.always = override, true, nOverride, false
						t.chunk, t.lit = prog.ChunkOf(c), lit
					}
				}
			case "tools.add_local":
				a, lit, ok := strArg(c, 0)
				if !ok || binds[a] != nil {
					continue
				}
				t := avail{alias: a, chunk: prog.ChunkOf(c), lit: lit}
				if d, _, ok := strArg(c, 1); ok {
					t.desc, t.known, t.n = d, true, normLen(d)
				}
				locals = append(locals, t)
			}
		}
		scope = append(scope, locals...)
		// Pairs where both are unchanged always tools were reported above.
		r.pairs(scope, true, u)
	}
	var own []*program.Chunk // reused
	for i, u := range prog.Sections {
		gen := i + 1
		own = own[:0]
		for _, c := range u.Chunks {
			if c.Kind == program.SectionChunk {
				own = append(own, c)
			}
		}
		if len(own) == 0 {
			judge(gen, u)
			continue
		}
		fp.name = u.Section.Name // its findings name it
		lo, hi := own[0].Index(), own[len(own)-1].Index()
		part := chunkmemo.Part[sectionFP]{Table: ix.Table(lo), File: pass.File, FP: fp, Chunks: ix.Chunks(lo, hi),
			Region: source.Span{Start: own[0].Span.Start, End: own[len(own)-1].Span.End}}
		run.Report(pass, part, func() {
			judge(gen, u)
		})
	}
	return nil, nil
}

// lastH1 is the last h1Key (chunkmemo.Stable).
var lastH1 atomic.Pointer[string]

// sectionKey is the memo of a section's findings.
var sectionKey = chunkmemo.NewKey("neardup")

// sectionFP is what they depend on besides the section's text.
type sectionFP struct {
	h1     string
	shared any
	name   string
}

// h1Key is what the H1's tools.bind and tools.always calls declare: the
// literal arguments of each, in order ("\x02" for one not a literal).
func h1Key(prog *program.Program) string {
	var b strings.Builder
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind", "tools.always":
			b.WriteString(c.Canonical())
			for i := range c.Expr.Args {
				b.WriteByte(0)
				if s, _, ok := strArg(c, i); ok {
					b.WriteString(s)
				} else {
					b.WriteByte(2)
				}
			}
			b.WriteByte(1)
		}
	}
	return b.String()
}

// strArg returns a call argument's value and literal when it is a string
// literal (program.Program.StringArg without the span lookup).
func strArg(c *program.Call, i int) (string, *ast.StringExpr, bool) {
	s, ok := c.Arg(i).(*ast.StringExpr)
	if !ok {
		return "", nil, false
	}
	return s.Value, s, true
}

// reporter reports near-duplicate pairs, caching the engine's similarity
// per description pair (the same pairs recur in every section).
type reporter struct {
	pass  *analysis.Pass
	prog  *program.Program
	sim   map[[2]string]float64
	known []*avail
}

// pairs reports every near-duplicate pair in scope order, with the
// engine's similarity function and threshold (the pairs are exactly those
// toolrule.NearDuplicates returns; the loop is here only to cache scores
// and skip pairs that cannot be near-duplicates). In a section (u != nil,
// skipAlways) pairs of two unchanged always tools are skipped: they were
// reported once for every section.
func (r *reporter) pairs(scope []avail, skipAlways bool, u *program.Unit) {
	known := r.known[:0]
	for i := range scope {
		if scope[i].known {
			known = append(known, &scope[i])
		}
	}
	r.known = known
	for i := 0; i < len(known); i++ {
		for j := i + 1; j < len(known); j++ {
			a, b := known[i], known[j]
			if skipAlways && a.always && b.always {
				continue
			}
			if lengthsApart(a.n, b.n) {
				continue // similarity below the threshold, see similarity
			}
			key := [2]string{a.desc, b.desc}
			s, ok := r.sim[key]
			if !ok {
				s = toolrule.Similarity(a.desc, b.desc)
				r.sim[key] = s
			}
			if s < toolrule.NearDuplicateThreshold {
				continue
			}
			r.report(a, b, s, u)
		}
	}
}

// report reports the near-duplicate pair a, b (in scope order) at
// whichever literal made the pair complete (the later one).
func (r *reporter) report(a, b *avail, s float64, u *program.Unit) {
	pair := toolrule.DupPair{A: toolrule.Described{Alias: a.alias, Description: a.desc},
		B: toolrule.Described{Alias: b.alias, Description: b.desc}, Similarity: s}
	at, bt := r.span(a), r.span(b)
	if at.Start > bt.Start {
		a, at, bt = b, bt, at
	}
	where := "every section"
	if u != nil {
		where = "section `" + u.Section.Name + "`"
	}
	r.pass.Report(analysis.Diagnostic{Span: bt, Code: Code,
		Message: fmt.Sprintf("in %s: %s", where, pair.Message()),
		Related: []analysis.RelatedInformation{{Span: at, Message: fmt.Sprintf("%q made available here", a.alias)}}})
}

func (r *reporter) span(t *avail) source.Span { return r.prog.Span(t.chunk, t.lit) }

// lengthsApart reports whether two descriptions of normalised rune
// lengths la and lb cannot be near-duplicates: the edit distance is at
// least the length difference, so similarity <= 1 - |la-lb|/max(la,lb).
// The bound is exact, so skipping such pairs reports the same pairs as
// calling toolrule.Similarity for every one.
func lengthsApart(la, lb int) bool {
	m := max(la, lb)
	if m == 0 {
		return false
	}
	d := la - lb
	if d < 0 {
		d = -d
	}
	return 1-float64(d)/float64(m) < toolrule.NearDuplicateThreshold
}

// normLen is toolrule.NormalizedLen, with a fast path for ASCII text
// (where lower-casing keeps a byte's class, letters and digits are
// [A-Za-z0-9] and spaces are [\t\n\v\f\r ]).
func normLen(s string) int {
	n, space := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return toolrule.NormalizedLen(s)
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			if space && n > 0 {
				n++
			}
			space = false
			n++
		case c == ' ' || '\t' <= c && c <= '\r':
			space = true
		}
	}
	return n
}

func allBound(recs []*bind) bool {
	for _, b := range recs {
		if b == nil {
			return false
		}
	}
	return true
}
