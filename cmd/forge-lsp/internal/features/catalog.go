package features

import "github.com/forge-lsp/forge-lsp/engine/toolrule"

// ResolveTool returns the catalog tool a capability text binds to, or
// the picker's explanation of why it does not: the tool a run would bind
// (the checker resolves with the same picker over the same catalog).
func ResolveTool(c *toolrule.Catalog, capability string) (*toolrule.CatalogTool, string) {
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
