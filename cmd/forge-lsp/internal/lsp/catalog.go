package lsp

import "github.com/forge-lsp/forge-lsp/engine/toolrule"

// catalog is the tool catalog a run of a document would see: the one
// engine/toolrule builds for the checker too (the built-ins and the
// workspace tools file), so hover names the tool a run would bind
// (features.ResolveTool). A snapshot resolves it once (inputs.go).
type catalog struct{ *toolrule.Catalog }
