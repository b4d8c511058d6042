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
	"github.com/forge-lsp/forge-lsp/analysis/passes/addlocal"
	"github.com/forge-lsp/forge-lsp/analysis/passes/aliases"
	"github.com/forge-lsp/forge-lsp/analysis/passes/aliassyntax"
	"github.com/forge-lsp/forge-lsp/analysis/passes/frontmatter"
	"github.com/forge-lsp/forge-lsp/analysis/passes/jumphandler"
	"github.com/forge-lsp/forge-lsp/analysis/passes/luahygiene"
	"github.com/forge-lsp/forge-lsp/analysis/passes/markdown"
	"github.com/forge-lsp/forge-lsp/analysis/passes/modelopts"
	"github.com/forge-lsp/forge-lsp/analysis/passes/modelrequired"
	"github.com/forge-lsp/forge-lsp/analysis/passes/neardup"
	"github.com/forge-lsp/forge-lsp/analysis/passes/parseerrors"
	"github.com/forge-lsp/forge-lsp/analysis/passes/placeholders"
	"github.com/forge-lsp/forge-lsp/analysis/passes/placement"
	"github.com/forge-lsp/forge-lsp/analysis/passes/sectionref"
	"github.com/forge-lsp/forge-lsp/analysis/passes/upstream"
	"github.com/forge-lsp/forge-lsp/engine/parse"
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
	placement.Analyzer,
	modelopts.Analyzer,
	modelrequired.Analyzer,
	luahygiene.Analyzer,
	placeholders.Analyzer,
	upstream.Analyzer,
}

// Check runs every analyzer over p with cfg (nil means defaults) and
// returns the diagnostics sorted by position. It never panics.
func Check(p *parse.Prompt, cfg *analysis.Config) []analysis.Diagnostic {
	diags, _ := CheckContext(context.Background(), p, cfg) // never cancelled
	return diags
}

// CheckContext is Check that stops when ctx is cancelled and then returns
// ctx.Err() (the language server cancels the analysis of a version the
// user has already edited again).
func CheckContext(ctx context.Context, p *parse.Prompt, cfg *analysis.Config) ([]analysis.Diagnostic, error) {
	return analysis.Run(ctx, p, Analyzers, cfg)
}

// CodeInfo is one code with the analyzer that reports it.
type CodeInfo struct {
	*analysis.Code
	Analyzer *analysis.Analyzer
}

// Codes returns every code the analyzers declare, sorted by name.
func Codes() []CodeInfo {
	var out []CodeInfo
	for _, a := range Analyzers {
		for _, c := range a.Codes {
			out = append(out, CodeInfo{Code: c, Analyzer: a})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KnownCode reports whether code is declared by some analyzer.
func KnownCode(code string) bool {
	for _, a := range Analyzers {
		for _, c := range a.Codes {
			if c.Name == code {
				return true
			}
		}
	}
	return false
}
