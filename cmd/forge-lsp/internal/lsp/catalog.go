package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/tools"
)

// catalogTool is one tool of the catalog as hover shows it.
type catalogTool struct {
	id, wire, description string
	params                json.RawMessage
	untrusted             bool
}

// catalog is the tool catalog a run of a document would see: the engine's
// built-ins plus the workspace tools file, with the engine's own picker so
// that hover names the same tool a run would bind.
type catalog struct {
	tools  []catalogTool
	picker *tools.Picker
	// source names the workspace tools file ("" when none); err is why
	// it could not be loaded.
	source, err string
	// stamp identifies the tools file version the catalog was built from.
	stamp string
}

// catalogFor returns the catalog for a document, cached per tools file.
// Called with s.mu held.
func (s *server) catalogFor(snap *snapshot) *catalog {
	path := s.cfg.ToolsFile
	if path == "" && strings.HasPrefix(string(snap.uri), "file:") {
		if p, ok := tools.FindWorkspaceFile(filepath.Dir(snap.file.Name)); ok {
			path = p
		}
	}
	if s.catalogs == nil {
		s.catalogs = map[string]*catalog{}
	}
	// The tools file may be edited while the server runs: rebuild when its
	// modification time or size changes.
	stamp := ""
	if path != "" {
		if fi, err := os.Stat(path); err == nil {
			stamp = fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
		}
	}
	if c, ok := s.catalogs[path]; ok && c.stamp == stamp {
		return c
	}
	c := buildCatalog(path)
	c.stamp = stamp
	s.catalogs[path] = c
	return c
}

func buildCatalog(path string) *catalog {
	// The built-ins as the engine assembles them for a run (engine/run
	// initTools): web_search and web_fetch, whose output is untrusted.
	list := []tools.Tool{tools.NewWebSearch(nil), tools.NewWebFetch(nil)}
	untrusted := map[string]bool{tools.WebSearchID.String(): true, tools.WebFetchID.String(): true}
	c := &catalog{source: path}
	if path != "" {
		if extra, err := tools.LoadWorkspaceTools(path); err != nil {
			c.err = err.Error()
		} else {
			list = append(list, extra...)
			for _, t := range extra {
				if ct, ok := t.(*tools.CommandTool); ok && ct.Untrusted() {
					untrusted[t.ID().String()] = true
				}
			}
		}
	}
	entries := make([]tools.Entry, 0, len(list))
	for _, t := range list {
		id := t.ID().String()
		c.tools = append(c.tools, catalogTool{id: id, wire: t.WireName(), description: t.Description(), params: t.Parameters(), untrusted: untrusted[id]})
		entries = append(entries, tools.EntryFor(t))
	}
	c.picker = tools.NewPicker(entries, tools.DefaultPickerConfig())
	return c
}

// resolve returns the catalog tool a capability text binds to, or the
// picker's explanation of why it does not.
func (c *catalog) resolve(capability string) (*catalogTool, string) {
	d := c.picker.Resolve(capability)
	if err := d.Err("tool", capability); err != nil {
		return nil, err.Error()
	}
	if len(d.IDs) == 0 {
		return nil, "no tool matches"
	}
	id := d.IDs[0].String()
	for i := range c.tools {
		if c.tools[i].id == id {
			return &c.tools[i], ""
		}
	}
	return nil, "the picked tool " + id + " is not in the catalog"
}
