package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

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

// catalogFor returns the catalog for a document: the one a document
// request read before it locked (requests.go), else catalog's.
func (s *server) catalogFor(ctx context.Context, snap *snapshot) *catalog {
	if pin := pinOf(ctx); pin != nil && pin.snap == snap && pin.cat != nil {
		return pin.cat
	}
	return s.catalog(snap)
}

// catalogs caches tool catalogs per workspace tools file. It has its own
// lock, held only to look up and store: catalogs are built (the file
// read) outside it and outside s.mu.
type catalogs struct {
	mu sync.Mutex
	m  map[string]*catalog
}

// reset forgets every catalog (the configuration changed).
func (c *catalogs) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// catalog returns the catalog for a document, cached per tools file. It
// reads the file system; call it without s.mu.
func (s *server) catalog(snap *snapshot) *catalog {
	path := s.analysisToolsFile()
	if path == "" && strings.HasPrefix(string(snap.uri), "file:") {
		if p, ok := tools.FindWorkspaceFile(filepath.Dir(snap.file.Name)); ok {
			path = p
		}
	}
	// The tools file may be edited while the server runs: rebuild when its
	// modification time or size changes.
	stamp, regular := "", true
	if path != "" {
		if fi, err := os.Stat(path); err == nil {
			stamp = fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
			regular = fi.Mode().IsRegular()
		}
	}
	s.catalogs.mu.Lock()
	c, ok := s.catalogs.m[path]
	s.catalogs.mu.Unlock()
	if ok && c.stamp == stamp {
		return c
	}
	if regular {
		c = buildCatalog(path)
	} else {
		// Never open a named pipe or a device: the read would block.
		c = buildCatalog("")
		c.source, c.err = path, path+" is not a regular file; only regular files are read"
	}
	c.stamp = stamp
	s.catalogs.mu.Lock()
	if s.catalogs.m == nil {
		s.catalogs.m = map[string]*catalog{}
	}
	s.catalogs.m[path] = c
	s.catalogs.mu.Unlock()
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
