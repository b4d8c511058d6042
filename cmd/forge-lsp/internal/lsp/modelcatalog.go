package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/tokens"
)

// The model catalog is an input of every snapshot (docs/architecture.md):
// the gateway's /models, fetched through engine/session as a run reaches
// the gateway, held by the server and handed to each new snapshot.

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
		// The fetch is the session's (the cassette, else the gateway
		// file or URL, with the key from the variable the settings name).
		ctx, cancel := context.WithTimeout(s.ctx, gateway.DefaultCatalogTimeout)
		defer cancel()
		models, err := cfg.gateway().Models(ctx, s.lookupEnv)
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
