// Package features is the language server's editor features apart from
// the protocol: hover, navigation (definition, references, highlights,
// rename), symbols and folding, and the prose budgets, as functions over
// a Snapshot and a byte offset that return the project's own types
// (byte spans, Markdown, edits). It imports no LSP library: the language
// server (cmd/forge-lsp/internal/lsp) decodes requests, converts
// positions and encodes the results, and other faces (the MCP server)
// may call the same functions (docs/architecture.md#where-to-add-things).
//
// A Snapshot never changes once made, and what is derived from it is
// computed once, by whichever caller asks first, so any number of
// goroutines may call features on one snapshot without a lock of their
// own.
package features

import (
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// Snapshot is one version of a prompt and every input its features read:
// the parse, the gateway's model catalog and the tool catalog. Fields are
// set before the snapshot is shared and never change.
type Snapshot struct {
	// File is the prompt's text and coordinates.
	File *source.File
	// Prompt is the parse of File; never nil.
	Prompt *parse.Prompt
	// Models is the gateway's model catalog (nil when none is known).
	Models []gateway.Model

	catalog func() *toolrule.Catalog
	cat     memo[*toolrule.Catalog]
	flow    memo[*flow.Result]
	budgets memo[[]Budget]
}

// memo is a value computed once, by whichever goroutine asks first;
// others asking meanwhile wait for it.
type memo[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
}

func (m *memo[T]) get(compute func() T) T {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		m.v, m.done = compute(), true
	}
	return m.v
}

func (m *memo[T]) peek() (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.v, m.done
}

// NewSnapshot makes a snapshot of a parsed prompt. catalog returns the
// tool catalog a run of the prompt would see; it is called at most once,
// when a feature first needs it (it may read the tools file). A nil
// catalog means the built-in tools only.
func NewSnapshot(file *source.File, prompt *parse.Prompt, models []gateway.Model, catalog func() *toolrule.Catalog) *Snapshot {
	return &Snapshot{File: file, Prompt: prompt, Models: models, catalog: catalog}
}

// Catalog returns the tool catalog, resolved on first use.
func (s *Snapshot) Catalog() *toolrule.Catalog {
	return s.cat.get(func() *toolrule.Catalog {
		if s.catalog != nil {
			if c := s.catalog(); c != nil {
				return c
			}
		}
		return toolrule.NewCatalog("", nil, nil)
	})
}

// Program returns the analyzer's program model of the parse (memoised by
// program.Of, shared with the analysis).
func (s *Snapshot) Program() *program.Program { return program.Of(s.Prompt) }

// Symbols returns the declarations and references of the parse
// (program.SymbolsOf, shared with the analysis).
func (s *Snapshot) Symbols() *program.Symbols { return program.SymbolsOf(s.Prompt) }

// Flow returns the walk over the section graph, computed once.
func (s *Snapshot) Flow() *flow.Result {
	return s.flow.get(func() *flow.Result { return flow.Analyze(s.Program()) })
}

// Budgets returns the estimates of every prose block in file order,
// computed once (tool schemas from the catalog). The slice is shared:
// copy before changing it (WithModels does).
func (s *Snapshot) Budgets() []Budget {
	return s.budgets.get(func() []Budget { return computeBudgets(s) })
}

// BudgetsReady returns the budgets if they have been computed, without
// computing them.
func (s *Snapshot) BudgetsReady() ([]Budget, bool) { return s.budgets.peek() }
