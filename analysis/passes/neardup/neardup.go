package neardup

import (
	"fmt"

	"github.com/forge-lsp/forge-lsp/analysis"
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

type avail struct {
	alias string
	desc  string
	known bool
	// at is where the tool became available (with this description).
	at     source.Span
	always bool
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	if len(prog.Sections) == 0 {
		return nil, nil // near-duplicates are checked only in sections
	}
	// H1: bind overrides, then always (with its override replacing the
	// bind override).
	bindOverride := map[string]string{}
	bound := map[string]bool{}
	var always []*avail
	alwaysIdx := map[string]*avail{}
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind":
			a, _, ok := prog.StringArg(c, 0)
			if !ok || bound[a] {
				continue
			}
			bound[a] = true
			if o, _, ok := prog.StringArg(c, 2); ok {
				bindOverride[a] = o
			}
		case "tools.always":
			a, span, ok := prog.StringArg(c, 0)
			if !ok || !bound[a] || alwaysIdx[a] != nil {
				continue
			}
			t := &avail{alias: a, at: span, always: true}
			if o, _, ok := prog.StringArg(c, 1); ok {
				t.desc, t.known = o, true
			} else if o, ok := bindOverride[a]; ok {
				t.desc, t.known = o, true
			}
			always = append(always, t)
			alwaysIdx[a] = t
		}
	}
	// The same pairs recur in every section: cache the engine's
	// similarity per description pair.
	sim := map[[2]string]float64{}
	lens := map[string]int{}
	// Pairs of always tools clash in every section: report once.
	reportPairs(pass, sim, lens, always, func(b *avail) bool { return true }, "every section")

	for _, u := range prog.Sections {
		scope := make([]*avail, 0, len(always)+4)
		idx := map[string]*avail{}
		for _, t := range always {
			cp := *t
			scope = append(scope, &cp)
			idx[t.alias] = &cp
		}
		var locals []*avail
		for _, c := range u.Calls {
			if c.Where == api.H1 {
				continue
			}
			switch c.Canonical() {
			case "tools.add":
				override, hasOverride := "", false
				if o, _, ok := prog.StringArg(c, 1); ok {
					override, hasOverride = o, true
				}
				lits := c.AddAliases()
				if !allBound(lits, bound) {
					continue // tools.add is atomic: one bad alias adds nothing
				}
				for _, lit := range lits {
					a := lit.Value
					span := prog.Span(c.Chunk, lit)
					t := idx[a]
					if t == nil {
						t = &avail{alias: a}
						if o, ok := bindOverride[a]; ok {
							t.desc, t.known = o, true
						}
						scope = append(scope, t)
						idx[a] = t
						t.at = span
					}
					if hasOverride {
						t.desc, t.known, t.at, t.always = override, true, span, false
					}
				}
			case "tools.add_local":
				a, span, ok := prog.StringArg(c, 0)
				if !ok || bound[a] {
					continue
				}
				t := &avail{alias: a, at: span}
				if d, _, ok := prog.StringArg(c, 1); ok {
					t.desc, t.known = d, true
				}
				locals = append(locals, t)
			}
		}
		scope = append(scope, locals...)
		// Pairs where both are unchanged always tools were reported above.
		reportPairs(pass, sim, lens, scope, func(b *avail) bool { return !b.always }, "section `"+u.Section.Name+"`")
	}
	return nil, nil
}

// reportPairs reports every near-duplicate pair in scope order, with the
// engine's similarity function and threshold (the pairs are exactly those
// toolrule.NearDuplicates returns; the loop is here only to cache scores).
func reportPairs(pass *analysis.Pass, sim map[[2]string]float64, lens map[string]int, scope []*avail, want func(b *avail) bool, where string) {
	var known []*avail
	var n []int // n[i] is known[i]'s normalised rune length
	for _, t := range scope {
		if t.known {
			known = append(known, t)
			n = append(n, runeLen(t.desc, lens))
		}
	}
	for i := 0; i < len(known); i++ {
		for j := i + 1; j < len(known); j++ {
			a, b := known[i], known[j]
			if lengthsApart(n[i], n[j]) {
				continue // similarity below the threshold, see similarity
			}
			key := [2]string{a.desc, b.desc}
			s, ok := sim[key]
			if !ok {
				s = toolrule.Similarity(a.desc, b.desc)
				sim[key] = s
			}
			if s < toolrule.NearDuplicateThreshold {
				continue
			}
			pair := toolrule.DupPair{A: toolrule.Described{Alias: a.alias, Description: a.desc},
				B: toolrule.Described{Alias: b.alias, Description: b.desc}, Similarity: s}
			// Report at whichever call made the pair complete (the later one).
			if a.at.Start > b.at.Start {
				a, b = b, a
			}
			if !want(b) && !want(a) {
				continue
			}
			pass.Report(analysis.Diagnostic{Span: b.at, Code: Code,
				Message: fmt.Sprintf("in %s: %s", where, pair.Message()),
				Related: []analysis.RelatedInformation{{Span: a.at, Message: fmt.Sprintf("%q made available here", a.alias)}}})
		}
	}
}

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

// runeLen is the rune length of s after the engine's normalisation,
// cached per description.
func runeLen(s string, lens map[string]int) int {
	n, ok := lens[s]
	if !ok {
		n = toolrule.NormalizedLen(s)
		lens[s] = n
	}
	return n
}

func allBound(lits []*ast.StringExpr, bound map[string]bool) bool {
	for _, l := range lits {
		if !bound[l.Value] {
			return false
		}
	}
	return true
}
