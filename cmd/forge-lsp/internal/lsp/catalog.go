package lsp

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// catalog is the tool catalog a run of a document would see: the one
// engine/toolrule builds for the checker too (the built-ins and the
// workspace tools file), so hover names the tool a run would bind.
type catalog struct{ *toolrule.Catalog }

// catalogFor returns the catalog for a document: the one a document
// request read before it locked (requests.go), else catalog's.
func (s *server) catalogFor(ctx context.Context, snap *snapshot) *catalog {
	if pin := pinOf(ctx); pin != nil && pin.snap == snap && pin.cat != nil {
		return pin.cat
	}
	return s.catalog(snap)
}

// catalog returns the catalog for a document: of the configured tools
// file, else the forge-tools.json at or above a file's folder. It reads
// the file system (toolrule caches per file version); call it without
// s.mu.
func (s *server) catalog(snap *snapshot) *catalog {
	path := s.analysisToolsFile()
	if path == "" && strings.HasPrefix(string(snap.uri), "file:") {
		if p, ok := toolcat.Find(filepath.Dir(snap.file.Name)); ok {
			path = p
		}
	}
	return &catalog{toolcat.For(path)}
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
