package session

import (
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

// ToolsCache keeps the workspace tools file a host's sessions resolved and
// the tools read from it (Options.Tools), for a host that opens many
// sessions of one prompt in a row: the debugger re-runs it at every step
// back (docs/debugging.md#what-if). The search for forge-tools.json up the
// folders is made once for a ToolsFile and ToolsDir; the file found is
// read again only when its size or modification time changed, or it went
// (or was modified too recently to tell: fsread.StampOf).
// A forge-tools.json created nearer the prompt afterwards is not seen
// until the host starts a new cache (the debugger: at the next launch).
// The zero value is ready; it is safe for concurrent use.
type ToolsCache struct {
	mu sync.Mutex
	ok bool
	// file and dir are what the search was made for; path what it found
	// ("" for none), stamp the file's as it was read.
	file, dir string
	path      string
	stamp     fsread.Stamp
	tools     []tools.Tool
	// reads counts the searches and reads made, for tests.
	reads int
}

// load is workspaceTools through the cache. The tools returned are shared
// by the sessions (a CommandTool is not changed by a run).
func (c *ToolsCache) load(file, dir string) ([]tools.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.file == file && c.dir == dir {
		if c.path == "" {
			return nil, nil
		}
		if st, ok := fsread.StampOf(c.path); ok && st.Size == c.stamp.Size && st.ModTime.Equal(c.stamp.ModTime) {
			return c.tools, nil
		}
	}
	c.ok = false
	c.reads++
	path := toolcat.Resolve(file, dir)
	if path == "" {
		c.ok, c.file, c.dir, c.path, c.tools = true, file, dir, "", nil
		return nil, nil
	}
	// Stat before the read: a change during it shows at the next load.
	st, vouched := fsread.StampOf(path)
	ts, err := tools.LoadWorkspaceTools(path)
	if err != nil {
		return nil, err
	}
	if vouched {
		c.ok, c.file, c.dir, c.path, c.tools, c.stamp = true, file, dir, path, ts, st
	}
	return ts, nil
}
