package checker

import "github.com/forge-lsp/forge-lsp/analysis"

// The language server's own checks need what only the server has: its
// document size limit, the prose budgets and the gateway's model catalog.
// `forge-lsp check` does not run them, but they are analyzers like the
// rest: the server runs them through the one driver (analysis.Run), so
// the workspace configuration's severities and forge:ignore comments apply
// to their findings, and their codes are listed (--list-codes, Codes) and
// documented (docs/codes.md) with the others.

// TooLarge reports a document the language server does not analyse
// because it is larger than its size limit.
var TooLarge = &analysis.Analyzer{
	Name: "toolarge",
	Doc:  "toolarge reports a document larger than the language server analyses (it gets no other diagnostics or features); the server supplies the check.",
	Codes: []*analysis.Code{{Name: "too-large", Severity: analysis.Info,
		Summary: "the file is larger than the language server analyses; it gets no diagnostics or features"}},
	Run: supplied,
}

// ContextBudget reports a model round whose lower-bound token count
// exceeds its model's context, from the gateway's model catalog.
var ContextBudget = &analysis.Analyzer{
	Name: "contextbudget",
	Doc:  "contextbudget reports a model round that sends more tokens, at least, than its model's context accepts (the model catalog's context sizes); the language server supplies the check.",
	Codes: []*analysis.Code{{Name: "context-budget", Severity: analysis.Warning,
		Summary: "a model round sends at least more tokens than its model's context accepts"}},
	Run: supplied,
}

// ServerAnalyzers are the analyzers the language server supplies
// (Supplied); Check does not run them.
var ServerAnalyzers = []*analysis.Analyzer{TooLarge, ContextBudget}

// supplied is the Run of a server analyzer without the server's inputs:
// nothing to report.
func supplied(*analysis.Pass) (any, error) { return nil, nil }

// Supplied returns a, one of ServerAnalyzers, reporting the findings find
// computes from the host's inputs; run it with analysis.Run so that the
// configuration and suppressions apply.
func Supplied(a *analysis.Analyzer, find func(*analysis.Pass) []analysis.Diagnostic) *analysis.Analyzer {
	c := *a
	c.Run = func(pass *analysis.Pass) (any, error) {
		for _, d := range find(pass) {
			pass.Report(d)
		}
		return nil, nil
	}
	return &c
}
