package modelrequired

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// Code is the diagnostic code.
const Code = "model-required"

// Analyzer reports prose without a model.
var Analyzer = &analysis.Analyzer{
	Name:     "modelrequired",
	Doc:      "report prose that the run sends to a model when no model is bound",
	Codes:    []*analysis.Code{{Name: Code, Severity: analysis.Error, Summary: "Prose that the run reaches would be sent to a model, but no models.default (or section models.use) is bound, so the run fails."}},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	p := pass.Prompt
	// H1 prose: a models.default must run before the block. The first
	// H1 prose that surely reaches a model fails the run, and nothing
	// after it runs.
	defaultBefore := func(block int) bool {
		for _, c := range prog.H1.Calls {
			if c.Canonical() == "models.default" && prog.ChunkOf(c).Block < block {
				return true
			}
		}
		return false
	}
	for i, b := range p.H1Blocks {
		if b.Kind == parse.LuaBlock {
			if b.Chunk != nil && fl.EndOf(b.Chunk) != flow.Continues {
				break // the H1 may end here
			}
			continue
		}
		if defaultBefore(i) {
			break
		}
		if !sent(b.Prose) {
			continue
		}
		pass.Reportf(firstLine(pass.File, b.Prose.Span), Code,
			"H1 prose is sent to a model, but no models.default is declared before it (model binding required for H1 `%s`); add models.default(...) in an H1 ```lua block above it, or move notes meant for humans below a --- line in the H1", p.Title)
		return nil, nil
	}
	if fl.DefaultModel {
		return nil, nil
	}
	for _, u := range prog.Sections {
		s := u.Section
		if !fl.Known.Entered.Has(s) {
			continue
		}
		first := -1
		for i, b := range s.Blocks {
			if b.Kind == parse.ProseBlock {
				first = i
				break
			}
		}
		if first < 0 || usesModel(prog, u, first) {
			continue
		}
		for i, b := range s.Blocks {
			if b.Kind != parse.ProseBlock || !fl.BlockRuns(s, i) || !sent(b.Prose) {
				continue
			}
			pass.Reportf(firstLine(pass.File, b.Prose.Span), Code,
				"prose in section `%s` is sent to a model, but no model is bound (model binding required for section %s); add models.default(...) in the H1, or models.use(...) in a Lua block before this section's first prose", s.Name, s.Name)
			break // the run stops at the first one
		}
	}
	return nil, nil
}

// sent reports whether a prose block is surely non-blank after
// substitution: some literal text outside placeholders is not white space.
// A block made only of placeholders may render empty and be skipped; a
// malformed one fails substitution first (placeholder-syntax).
func sent(pr *parse.Prose) bool {
	if strings.TrimSpace(pr.Text) == "" {
		return false
	}
	t, err := pr.Template()
	if err != nil {
		return false
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Kind == template.Placeholder {
			if template.Check(n) != nil {
				return false
			}
			continue
		}
		if strings.TrimSpace(n.Text) != "" {
			return true
		}
	}
	return false
}

// usesModel reports whether a models.use call runs before the first
// prose block (in the shared library or an earlier section chunk); the
// engine resolves the section's model at its first prose block.
func usesModel(prog *program.Program, u *program.Unit, first int) bool {
	for _, c := range u.Calls {
		if c.Canonical() != "models.use" || c.Where == api.Handler {
			continue
		}
		if ch := prog.ChunkOf(c); ch.Kind == program.SharedChunk || ch.Block < first {
			return true
		}
	}
	return false
}

func firstLine(f *source.File, s source.Span) source.Span {
	l := f.Line(s.Start)
	end := f.LineEnd(l)
	if end > s.End {
		end = s.End
	}
	return source.Span{Start: s.Start, End: end}
}
