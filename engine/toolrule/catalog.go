package toolrule

import "encoding/json"

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

// NewCatalog is the catalog of the built-ins plus the tools of cfg, the
// workspace tools file at path ("" for none). A non-nil err is why the file
// could not be read or decoded: the catalog then holds the built-ins only
// and reports err. It reads nothing (engine/toolcat loads the file).
func NewCatalog(path string, cfg *WorkspaceConfig, err error) *Catalog {
	c := &Catalog{File: path, Tools: builtinTools(), Err: err}
	if err == nil && cfg != nil {
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
