package toolrule

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// CatalogTool is one tool of a run's catalog as the checker and the
// editor see it: its picker entry and what a hover or an estimate shows.
// The runtime's tools (engine/tools) report the same values.
type CatalogTool struct {
	Entry
	// Wire is the name the model sees.
	Wire string
	// Schema is the tool's parameter schema.
	Schema json.RawMessage
	// Untrusted output is wrapped in the run's envelope (the built-ins',
	// and a workspace tool's whose entry says "trust": "untrusted").
	Untrusted bool
}

// Catalog is the tools a run of a prompt sees, in the order a run
// registers them: web_search, web_fetch, then the workspace tools file's
// tools in file order; Picker resolves capabilities over them.
type Catalog struct {
	Tools  []CatalogTool
	Picker *Picker
	// File is the workspace tools file ("" when none). Err is why it
	// could not be loaded; the catalog then holds the built-ins only.
	File string
	Err  error
	// stamp identifies the version of File the catalog was built from.
	stamp string
}

// Tool returns the catalog tool with id, or nil.
func (c *Catalog) Tool(id ID) *CatalogTool {
	for i := range c.Tools {
		if c.Tools[i].ID == id {
			return &c.Tools[i]
		}
	}
	return nil
}

var catalogs = struct {
	sync.Mutex
	m map[string]*Catalog
}{m: map[string]*Catalog{}}

// CatalogFor returns the catalog of the built-ins plus the workspace tools
// file at path ("" for none). Catalogs, and their pickers, which memoise
// every decision, are kept per file and rebuilt when the file's
// modification time or size changes. The file is read outside the
// cache's lock and only when it is a regular file: a named pipe would
// block the read. Safe for concurrent use.
func CatalogFor(path string) *Catalog {
	stamp, regular := "", true
	if path != "" {
		if fi, err := os.Stat(path); err == nil {
			stamp = fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
			regular = fi.Mode().IsRegular()
		}
	}
	catalogs.Lock()
	c, ok := catalogs.m[path]
	catalogs.Unlock()
	if ok && c.stamp == stamp {
		return c
	}
	c = buildCatalog(path, regular)
	c.stamp = stamp
	catalogs.Lock()
	if len(catalogs.m) >= maxCatalogs {
		clear(catalogs.m)
	}
	catalogs.m[path] = c
	catalogs.Unlock()
	return c
}

// maxCatalogs bounds the cache: a server that saw many tools files keeps
// the recent ones.
const maxCatalogs = 64

func buildCatalog(path string, regular bool) *Catalog {
	c := &Catalog{File: path, Tools: builtinTools()}
	switch {
	case path == "":
	case !regular:
		c.Err = fmt.Errorf("%s is not a regular file; only regular files are read", path)
	default:
		cfg, err := ReadWorkspaceConfig(path)
		if err != nil {
			c.Err = err
			break
		}
		for _, s := range cfg.Tools {
			c.Tools = append(c.Tools, CatalogTool{
				Entry:     Entry{ID: ID{Server: "workspace", Name: s.Name}, Name: s.Name, Description: s.Description, Params: ParamNames(s.Parameters)},
				Wire:      s.Name,
				Schema:    s.Parameters,
				Untrusted: s.Trust == "untrusted",
			})
		}
	}
	entries := make([]Entry, len(c.Tools))
	for i, t := range c.Tools {
		entries[i] = t.Entry
	}
	c.Picker = NewPicker(entries, DefaultPickerConfig())
	return c
}
