package lsp

import (
	"context"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/tokens"
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

// loadVocabulary loads the token vocabulary (a variable so that tests see
// when the server asks for it).
var loadVocabulary = tokens.Ready

// refreshModelCatalog fetches the gateway's /models once per gateway
// (URL or cassette) in the background, unless the modelCatalog setting is
// false, then re-checks the open documents against it. Called with s.mu
// held.
func (s *server) refreshModelCatalog() {
	cfg := s.cfg
	key := cfg.GatewayURL + "\x00" + cfg.Cassette + "\x00" + cfg.GatewayConfig
	if cfg.ModelCatalog != nil && !*cfg.ModelCatalog || cfg.GatewayURL == "" && cfg.Cassette == "" && cfg.GatewayConfig == "" {
		had := s.modelCatalog != nil
		s.modelCatalog, s.modelCatalogKey = nil, ""
		if had {
			s.didModify(nil, 0) // the snapshots' model catalog is gone
		}
		return
	}
	if key == s.modelCatalogKey {
		return
	}
	s.modelCatalogKey = key
	s.goBackground("model catalog", func() {
		client, err := catalogClient(cfg, s.lookupEnv)
		if err != nil || client == nil {
			if err != nil {
				s.logger.Printf("model catalog: %v", err)
			}
			return
		}
		defer client.Close()
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		models, err := client.Models(ctx)
		if err != nil {
			s.logger.Printf("model catalog: %v", err)
			return
		}
		// With a catalog every diagnostics job counts prose tokens
		// (context-budget findings): load the vocabulary now, outside
		// s.mu. Without one it stays out of memory until a hover or an
		// inlay hint first shows a prose budget (tokens.Count loads it).
		if len(models) > 0 {
			if err := loadVocabulary(); err != nil {
				s.logger.Printf("token vocabulary: %v (token counts are estimated from length)", err)
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.modelCatalogKey != key || s.state != stateRunning {
			return
		}
		s.modelCatalog = models
		s.didModify(nil, 0)
	})
}

// catalogClient is a gateway client for /models: the replay cassette
// when one is configured, else the configured gateway with its key from
// the environment variable the settings name.
func catalogClient(cfg config, env gateway.LookupFunc) (*gateway.Client, error) {
	g := cfg.gateway()
	if g.Replay == "" && g.URL == "" && g.File == "" {
		return nil, nil
	}
	return g.Open(env)
}
