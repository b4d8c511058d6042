// Package checker is the registry of every PromptForge analyzer and the
// one entry point both `forge-lsp check` and the language server call:
//
//	diags := checker.Check(parse.Parse(name, content), cfg)
//
// cfg (possibly nil) comes from analysis.FindConfig for the file.
package checker

import (
	"context"
	"sort"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/passes/addlocal"
	"github.com/forge-lsp/forge-lsp/analysis/passes/aliases"
	"github.com/forge-lsp/forge-lsp/analysis/passes/aliassyntax"
	"github.com/forge-lsp/forge-lsp/analysis/passes/callargs"
	"github.com/forge-lsp/forge-lsp/analysis/passes/emptyplaceholder"
	"github.com/forge-lsp/forge-lsp/analysis/passes/frontmatter"
	"github.com/forge-lsp/forge-lsp/analysis/passes/jumphandler"
	"github.com/forge-lsp/forge-lsp/analysis/passes/luahygiene"
	"github.com/forge-lsp/forge-lsp/analysis/passes/markdown"
	"github.com/forge-lsp/forge-lsp/analysis/passes/modelopts"
	"github.com/forge-lsp/forge-lsp/analysis/passes/modelrequired"
	"github.com/forge-lsp/forge-lsp/analysis/passes/neardup"
	"github.com/forge-lsp/forge-lsp/analysis/passes/oldforms"
	"github.com/forge-lsp/forge-lsp/analysis/passes/parseerrors"
	"github.com/forge-lsp/forge-lsp/analysis/passes/placeholders"
	"github.com/forge-lsp/forge-lsp/analysis/passes/placement"
	"github.com/forge-lsp/forge-lsp/analysis/passes/sectionref"
	"github.com/forge-lsp/forge-lsp/analysis/passes/toolbind"
	"github.com/forge-lsp/forge-lsp/analysis/passes/upstream"
	"github.com/forge-lsp/forge-lsp/analysis/passes/walkcheck"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Analyzers is every analyzer the checker runs, in documentation order.
var Analyzers = []*analysis.Analyzer{
	parseerrors.Analyzer,
	frontmatter.Analyzer,
	markdown.Analyzer,
	aliassyntax.Analyzer,
	neardup.Analyzer,
	addlocal.Analyzer,
	jumphandler.Analyzer,
	sectionref.Analyzer,
	aliases.Analyzer,
	toolbind.Analyzer,
	placement.Analyzer,
	modelopts.Analyzer,
	modelrequired.Analyzer,
	walkcheck.Analyzer,
	callargs.Analyzer,
	luahygiene.Analyzer,
	placeholders.Analyzer,
	emptyplaceholder.Analyzer,
	upstream.Analyzer,
	oldforms.Analyzer,
}

// Check runs every analyzer over p with cfg (nil means defaults) and
// returns the diagnostics sorted by position. It never panics.
//
// A span that a parse error refused gets no follow-on findings: the
// engine refuses the whole file, and a second finding about the same text
// (say, that a refused fence is prose sent to a model) would contradict
// the first.
//
// An error finding in code that no run can reach (after a top-level jump
// or return, in a section no walk enters), or inside a function that
// pcall runs, is reported as a warning: the severity policy
// (docs/codes.md) keeps errors for lines where the run fails.
func Check(p *parse.Prompt, cfg *analysis.Config) []analysis.Diagnostic {
	diags, _ := CheckContext(context.Background(), p, cfg) // never cancelled
	return diags
}

// CheckContext is Check that stops when ctx is cancelled and then returns
// ctx.Err() (the language server cancels the analysis of a version the
// user has already edited again).
func CheckContext(ctx context.Context, p *parse.Prompt, cfg *analysis.Config) ([]analysis.Diagnostic, error) {
	if p != nil && cfg != nil && cfg.Once {
		chunkmemo.Once(p)
	}
	all := make([]*analysis.Analyzer, 0, len(Analyzers)+1)
	diags, results, err := analysis.RunResults(ctx, p, append(append(all, Analyzers...), flow.Analyzer), cfg)
	if err != nil {
		return diags, err
	}
	fl, _ := results[flow.Analyzer].(*flow.Result)
	if fl != nil {
		for i := range diags {
			d := &diags[i]
			if d.Severity != analysis.Error || d.Analyzer == parseerrors.Analyzer.Name || d.Code == analysis.CodeInternal {
				continue
			}
			switch {
			case fl.Dead(d.Span):
				d.Severity = analysis.Warning
				d.Message += " (in code no run reaches)"
			case fl.Caught(d.Span):
				d.Severity = analysis.Warning
				d.Message += " (inside pcall, which catches the error)"
			}
		}
	}
	if p == nil || len(p.Errors) == 0 {
		return diags, nil
	}
	out := diags[:0]
	for _, d := range diags {
		if d.Analyzer == parseerrors.Analyzer.Name || !refused(p.Errors, d.Span) {
			out = append(out, d)
		}
	}
	return out, nil
}

// refused reports whether s overlaps the span of a parse error (an empty
// span counts as its position).
func refused(errs []*parse.Error, s source.Span) bool {
	for _, e := range errs {
		a, b := e.Span, s
		if a.Start == b.Start || (a.Start < b.End && b.Start < a.End) ||
			(b.Start == b.End && a.Start <= b.Start && b.Start < a.End) {
			return true
		}
	}
	return false
}

// CodeInfo is one code with the analyzer that reports it.
type CodeInfo struct {
	*analysis.Code
	Analyzer *analysis.Analyzer
}

// Codes returns every code the analyzers declare (the checker's and the
// language server's, ServerAnalyzers), sorted by name.
func Codes() []CodeInfo {
	var out []CodeInfo
	for _, a := range append(append([]*analysis.Analyzer(nil), Analyzers...), ServerAnalyzers...) {
		for _, c := range a.Codes {
			out = append(out, CodeInfo{Code: c, Analyzer: a})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KnownCode reports whether code is declared by some analyzer.
func KnownCode(code string) bool {
	for _, a := range append(append([]*analysis.Analyzer(nil), Analyzers...), ServerAnalyzers...) {
		for _, c := range a.Codes {
			if c.Name == code {
				return true
			}
		}
	}
	return false
}
