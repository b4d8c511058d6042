package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// catalog is the tool catalog a run of a document would see: the one
// engine/toolrule builds for the checker too (the built-ins and the
// workspace tools file), so hover names the tool a run would bind
// (features.ResolveTool).
type catalog struct{ *toolrule.Catalog }

// catalogFor returns the tool catalog of a document's snapshot
// (inputs.go); a document request resolved it before its handler ran.
func (s *server) catalogFor(ctx context.Context, snap *snapshot) *catalog {
	return snap.inputs().catalog
}
