package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
)

// The prose budgets (static token estimates of each prose block and of
// the model round that sends it) are an editor feature
// (features.Budgets), a memo of the snapshot's features; the server
// fetches the model catalog they are resolved against and runs the
// context-budget analyzer over them.

// proseBudgets returns (computing once) the snapshot's prose budgets.
func (snap *snapshot) proseBudgets() []features.Budget {
	if snap.feat == nil {
		return nil
	}
	return snap.feat.Budgets()
}

// budgetFindings are the warnings for rounds whose lower bound exceeds
// their model's context (the snapshot's model catalog): the
// context-budget analyzer (checker.ContextBudget) run by the driver, so
// the configured severity and forge:ignore apply. The prose budgets must
// be ready (feat.Budgets); the findings are then memoised.
func budgetFindings(snap *snapshot) []analysis.Diagnostic {
	if !snap.isPrompt || snap.prompt == nil || len(snap.models) == 0 {
		return nil
	}
	bs, ready := snap.feat.BudgetsReady()
	if !ready {
		return nil
	}
	ds, _ := snap.budgetFindings.get(func() ([]analysis.Diagnostic, bool) {
		a := checker.Supplied(checker.ContextBudget, func(*analysis.Pass) []analysis.Diagnostic {
			return features.ContextBudget(features.WithModels(bs, snap.models))
		})
		ds, err := analysis.Run(context.Background(), snap.prompt, []*analysis.Analyzer{a}, snap.inputs().config)
		return ds, err == nil
	})
	return ds
}
