package lsp

import (
	"context"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// catalog is the tool catalog a run of a document would see: the one
// engine/toolrule builds for the checker too (the built-ins and the
// workspace tools file), so hover names the tool a run would bind.
type catalog struct{ *toolrule.Catalog }

// catalogFor returns the tool catalog of a document's snapshot
// (inputs.go); a document request resolved it before it locked.
func (s *server) catalogFor(ctx context.Context, snap *snapshot) *catalog {
	return snap.inputs().catalog
}

// resolve returns the catalog tool a capability text binds to, or the
// picker's explanation of why it does not.
func (c *catalog) resolve(capability string) (*toolrule.CatalogTool, string) {
	d := c.Picker.Resolve(capability)
	if err := d.Err("tool", capability); err != nil {
		return nil, err.Error()
	}
	if len(d.IDs) == 0 {
		return nil, "no tool matches"
	}
	if ct := c.Tool(d.IDs[0]); ct != nil {
		return ct, ""
	}
	return nil, "the picked tool " + d.IDs[0].String() + " is not in the catalog"
}
