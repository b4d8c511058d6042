package lsp

import "github.com/forge-lsp/forge-lsp/analysis/program"

// index returns the snapshot's declarations and references, part of the
// analyzer's program model of the same parse (program.SymbolsOf), so
// navigation, hover, completion and the diagnostics share one model.
func (snap *snapshot) index() *program.Symbols {
	return program.SymbolsOf(snap.prompt)
}
