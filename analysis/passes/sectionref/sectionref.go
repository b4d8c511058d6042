package sectionref

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
	"github.com/yuin/gopher-lua/ast"
)

// Codes.
const (
	CodeBadTarget = "bad-section-target"
	CodeUnknown   = "unknown-section"
	CodeKind      = "section-kind"
)

// Analyzer resolves section targets.
var Analyzer = &analysis.Analyzer{
	Name: "sectionref",
	Doc:  "resolve literal jump/execute/fanout/list_from_section targets with the engine's visible-set rules",
	Codes: []*analysis.Code{
		{Name: CodeBadTarget, Severity: analysis.Error, Summary: "A section target is not a heading string such as \"## Name\"."},
		{Name: CodeUnknown, Severity: analysis.Error, Summary: "A section target matches no section visible from the caller (siblings and direct children)."},
		{Name: CodeKind, Severity: analysis.Error, Summary: "list_from_section names a section without list items, or fanout uses a list section as its worker."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      runPass,
}

func runPass(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	p := pass.Prompt
	// Fanout workers and their callers, for arm resolution.
	callers := map[*parse.Section][]*parse.Section{}
	for _, c := range prog.Calls {
		if c.Canonical() != "fanout" || prog.ChunkOf(c).Kind != program.SectionChunk {
			continue
		}
		if t, _, ok := prog.StringArg(c, 0); ok {
			if w, err := parse.Resolve(p, prog.ChunkOf(c).Section, t); err == nil {
				callers[w] = append(callers[w], prog.ChunkOf(c).Section)
			}
		}
	}
	r := &resolver{pass: pass, prog: prog, fl: fl, callers: callers, found: map[string]*parse.Section{}}
	// A section's findings depend on its own chunks (the region's text),
	// the prompt's headings (heads: what every target resolves against),
	// the sections that start it as a fanout worker and whether it runs
	// only as one: memoised on the section's first own chunk, unless a
	// finding names another section's line (volatile).
	var heads string
	var order map[*parse.Section]int
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[sectionFP](ix, sectionKey)
	defer run.Done()
	for _, u := range prog.Sections {
		first, last := u.OwnChunks()
		if first == nil || !r.anyTarget(prog.Chunks[first.Index():last.Index()+1]) {
			continue // most sections: no finding, nothing to memoise
		}
		if order == nil {
			heads, order = headsKey(p)
			heads = chunkmemo.Stable(&lastHeads, heads)
		}
		from := first.Section
		fp := sectionFP{heads: heads, arm: fl.May.Arm.Has(from), walked: fl.May.Walked.Has(from)}
		if cs := callers[from]; len(cs) > 0 {
			b := make([]byte, 0, 4*len(cs))
			for _, c := range cs {
				b = binary.AppendUvarint(b, uint64(order[c]))
			}
			fp.callers = string(b)
		}
		part := chunkmemo.Part[sectionFP]{Table: ix.Table(first.Index()), File: pass.File, FP: fp, Chunks: ix.Chunks(first.Index(), last.Index()),
			Region: source.Span{Start: first.Span.Start, End: last.Span.End}}
		run.ReportIf(pass, part, func() bool {
			r.volatile = false
			for _, ch := range prog.Chunks[first.Index() : last.Index()+1] {
				for _, c := range prog.CallsIn(ch) {
					r.call(c)
				}
			}
			return !r.volatile
		})
	}
	computedTargets(pass, prog, fl, callers)
	return nil, nil
}

// resolver judges the section targets of calls, for one analysis.
type resolver struct {
	pass    *analysis.Pass
	prog    *program.Program
	fl      *flow.Result
	callers map[*parse.Section][]*parse.Section
	// found holds FindSection results per target, for "exists but not
	// visible" notes.
	found map[string]*parse.Section
	// takes holds Entry.TakesSection per entry called (it parses the
	// signature): a few entries, searched in order.
	takes []entryTakes
	// volatile is set when a finding names another section's line.
	volatile bool
}

// takesSection reports whether call c, in a section's own chunk, is one
// whose first argument names a section.
func (r *resolver) takesSection(c *program.Call) bool {
	if c.Entry == nil || c.Where == api.H1 {
		return false
	}
	for _, e := range r.takes {
		if e.e == c.Entry {
			return e.takes
		}
	}
	t := c.Entry.TakesSection()
	r.takes = append(r.takes, entryTakes{c.Entry, t})
	return t
}

// entryTakes is Entry.TakesSection of an entry.
type entryTakes struct {
	e     *api.Entry
	takes bool
}

// anyTarget reports whether a call of chunks names a section.
func (r *resolver) anyTarget(chunks []*program.Chunk) bool {
	for _, ch := range chunks {
		if ch.Kind != program.SectionChunk {
			continue
		}
		for _, c := range r.prog.CallsIn(ch) {
			if r.takesSection(c) {
				return true
			}
		}
	}
	return false
}

// call judges the literal section target of call c.
func (r *resolver) call(c *program.Call) {
	pass, prog, fl, callers, p := r.pass, r.prog, r.fl, r.callers, r.pass.Prompt
	if prog.ChunkOf(c).Kind != program.SectionChunk || !r.takesSection(c) {
		return
	}
	lit, ok := c.Arg(0).(*ast.StringExpr)
	if !ok {
		return
	}
	target, span := lit.Value, prog.SpanOf(c, lit)
	from := prog.ChunkOf(c).Section
	if _, _, err := parse.ParseTarget(target); err != nil {
		badTarget(pass, from, target, span, err)
		return
	}
	sec, err := parse.Resolve(p, from, target)
	if err != nil {
		for _, caller := range callers[from] {
			if s, ok := resolveInArm(p, caller, from, target); ok {
				sec, err = s, nil
				break
			}
		}
	}
	if err == nil && len(callers[from]) > 0 && fl.May.Arm.Has(from) && !fl.May.Walked.Has(from) {
		// The section runs only as a fanout worker, so the target is
		// resolved in the arm's visible set; it fails if it fails for
		// every caller.
		var armErr error
		for _, caller := range callers[from] {
			if _, e := parse.ResolveIn(armVisible(p, caller, from), target); e == nil {
				armErr = nil
				break
			} else if armErr == nil {
				armErr = fmt.Errorf("%s (in the fanout arm `%s` starts: an arm sees the caller's visible sections minus the worker, plus the worker's children)", e.Error(), caller.Name)
			}
		}
		if armErr != nil {
			pass.Report(analysis.Diagnostic{Span: span, Code: CodeUnknown, Message: armErr.Error()})
			return
		}
	}
	if err != nil {
		r.volatile = unknown(pass, from, target, span, err, r.found) || r.volatile
		return
	}
	switch c.Entry.Name {
	case "list_from_section":
		if !sec.IsList {
			pass.Reportf(span, CodeKind, "section `%s` has no pre-parsed items: list_from_section needs a section whose content is only bullet or numbered items (usually off-walk: --- first)", sec.Name)
		}
	case "fanout":
		if sec.IsList {
			pass.Reportf(span, CodeKind, "section `%s` is a list section, not a worker template; read it with list_from_section and fan out over a worker section", sec.Name)
		}
	}
}

// lastHeads is the last headsKey (chunkmemo.Stable).
var lastHeads atomic.Pointer[string]

// sectionKey is the memo of a section's findings.
var sectionKey = chunkmemo.NewKey("sectionref")

// sectionFP is what a section's findings depend on besides its own
// chunks' text.
type sectionFP struct {
	heads, callers string
	arm, walked    bool
}

// headsKey is the prompt's section tree as targets resolve against it
// (each section's level, name and whether it is a list, in tree order),
// and each section's place in that order.
func headsKey(p *parse.Prompt) (string, map[*parse.Section]int) {
	var b []byte
	order := map[*parse.Section]int{}
	var walk func([]*parse.Section)
	walk = func(ss []*parse.Section) {
		b = binary.AppendUvarint(b, uint64(len(ss)))
		for _, s := range ss {
			order[s] = len(order)
			b = binary.AppendUvarint(b, uint64(s.Level))
			if s.IsList {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(len(s.Name)))
			b = append(b, s.Name...)
			walk(s.Children)
		}
	}
	walk(p.Sections)
	return string(b), order
}

// armVisible is the visible set of an arm of worker started by caller.
// When that set is empty the engine resolves in the worker's own visible
// set (its arm frame then carries no set of its own), and so does this.
func armVisible(p *parse.Prompt, caller, worker *parse.Section) []*parse.Section {
	var out []*parse.Section
	for _, s := range parse.Visible(p, caller) {
		if s != worker {
			out = append(out, s)
		}
	}
	out = append(out, worker.Children...)
	if len(out) == 0 {
		return parse.Visible(p, worker)
	}
	return out
}

// resolveInArm resolves target from inside an arm of worker called by
// caller: caller's visible set minus the worker, plus the worker's
// children.
func resolveInArm(p *parse.Prompt, caller, worker *parse.Section, target string) (*parse.Section, bool) {
	level, name, err := parse.ParseTarget(target)
	if err != nil {
		return nil, false
	}
	var found *parse.Section
	n := 0
	for _, s := range append(parse.Visible(p, caller), worker.Children...) {
		if s != worker && s.Level == level && s.Name == name {
			found = s
			n++
		}
	}
	return found, n == 1
}

func luaQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func addresses(ss []*parse.Section) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Address()
	}
	return out
}

func badTarget(pass *analysis.Pass, from *parse.Section, target string, span source.Span, err error) {
	d := analysis.Diagnostic{Span: span, Code: CodeBadTarget, Message: err.Error()}
	name := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(target), "#"))
	for _, s := range parse.Visible(pass.Prompt, from) {
		if s.Name == name {
			d.Message += fmt.Sprintf("; write %q", s.Address())
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Change to " + s.Address(),
				Edits: []analysis.TextEdit{{Span: span, NewText: luaQuote(s.Address())}}}}
			break
		}
	}
	pass.Report(d)
}

// maxSuggest bounds the did-you-mean search: with hundreds of visible
// sections a suggestion is rarely useful and costs one edit distance per
// section per call.
const maxSuggest = 200

// unknown reports an unknown target; it returns true when the finding
// names another section's line.
func unknown(pass *analysis.Pass, from *parse.Section, target string, span source.Span, err error, found map[string]*parse.Section) (namesLine bool) {
	vis := parse.Visible(pass.Prompt, from)
	d := analysis.Diagnostic{Span: span, Code: CodeUnknown, Message: err.Error()}
	if len(vis) == 0 {
		d.Message = fmt.Sprintf("section heading `%s` not found; no section is visible from `%s` (only siblings and direct children can be addressed)", strings.TrimSpace(target), from.Name)
	}
	s, seen := found[target]
	if !seen {
		s, _ = parse.FindSection(pass.Prompt, target)
		found[target] = s
	}
	if s != nil && s != from && !strings.Contains(err.Error(), "ambiguous") {
		l, _ := pass.File.Position(s.Heading.Span.Start)
		d.Message += fmt.Sprintf(" (`%s` exists at line %d but is not visible from `%s`: only siblings and direct children can be addressed)", s.Address(), l, from.Name)
		d.Related = []analysis.RelatedInformation{{Span: s.Heading.Span, Message: "the section, not visible from the caller"}}
		namesLine = true
	} else if len(vis) <= maxSuggest {
		if to := suggest.Closest(strings.TrimSpace(target), addresses(vis)); to != "" {
			d.Message += fmt.Sprintf("; did you mean %q?", to)
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Change to " + to,
				Edits: []analysis.TextEdit{{Span: span, NewText: luaQuote(to)}}}}
		}
	}
	pass.Report(d)
	return namesLine
}
