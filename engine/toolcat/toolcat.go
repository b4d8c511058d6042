// Package toolcat loads the workspace tools file (forge-tools.json,
// docs/workspace-tools.md) into the tool catalog a run of a
// prompt sees. The rules over a catalog (alias grammar, near-duplicates,
// the capability picker, the file's format) are pure and live in
// engine/toolrule; this package is the I/O around them: finding the file,
// reading it safely, and keeping the catalogs it built.
//
// Resolve is the one answer to "which tools file does this prompt use":
// the configured one, else the nearest forge-tools.json at or above the
// prompt's folder. The checker, the language server and a run all ask it.
package toolcat

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// Find returns the nearest forge-tools.json at or above dir.
func Find(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, toolrule.WorkspaceFile)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Resolve returns the tools file a prompt in dir uses: configured when
// set (the --tools flag, .forge-lsp.json's toolsFile, a host's setting),
// else the nearest forge-tools.json at or above dir; "" for none (an
// empty dir searches nothing).
func Resolve(configured, dir string) string {
	if configured != "" || dir == "" {
		return configured
	}
	p, _ := Find(dir)
	return p
}

// Read reads and checks the workspace file at path. It runs nothing.
func Read(path string) (*toolrule.WorkspaceConfig, error) {
	data, err := fsread.ReadFile(path, fsread.Config)
	if err != nil {
		return nil, err
	}
	return toolrule.ParseWorkspaceConfig(path, data)
}

// Load builds the catalog of the built-ins plus the tools file at path
// ("" for none), reading the file now. Only a regular file is read: a
// named pipe would block the read.
func Load(path string) *toolrule.Catalog {
	c, _ := load(path)
	return c
}

// stamp is what a catalog was built from: the tools file's modification
// time and size when it was found (the zero stamp for none, or for a file
// that could not be stat'ed), compared on every look-up without building
// a string.
type stamp struct {
	mtime, size int64
	found       bool
	irregular   bool // found but not a regular file
}

func stampOf(path string) stamp {
	if path == "" {
		return stamp{}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{mtime: fi.ModTime().UnixNano(), size: fi.Size(), found: true, irregular: !fi.Mode().IsRegular()}
}

func load(path string) (*toolrule.Catalog, stamp) {
	stamp := stampOf(path)
	switch {
	case path == "":
		return toolrule.NewCatalog("", nil, nil), stamp
	case stamp.irregular:
		return toolrule.NewCatalog(path, nil, fmt.Errorf("%s is not a regular file; only regular files are read", path)), stamp
	}
	cfg, err := Read(path)
	return toolrule.NewCatalog(path, cfg, err), stamp
}

// Cache keeps the catalogs it built, one per tools file, and rebuilds one
// when its file's modification time or size changes. Catalogs, and their
// pickers, memoise every decision, so a host that checks many prompts
// shares them. The file is read outside the cache's lock. The zero value
// is ready to use; safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[string]entry
}

type entry struct {
	c     *toolrule.Catalog
	stamp stamp
}

// maxCatalogs bounds a cache: a server that saw many tools files keeps
// the recent ones.
const maxCatalogs = 64

// For returns the catalog of the tools file at path ("" for the
// built-ins only), from the cache when the file has not changed.
func (k *Cache) For(path string) *toolrule.Catalog {
	stamp := stampOf(path)
	k.mu.Lock()
	e, ok := k.m[path]
	k.mu.Unlock()
	if ok && e.stamp == stamp {
		return e.c
	}
	c, stamp := load(path)
	k.mu.Lock()
	if k.m == nil || len(k.m) >= maxCatalogs {
		k.m = map[string]entry{}
	}
	k.m[path] = entry{c, stamp}
	k.mu.Unlock()
	return c
}

// shared is the cache of For: one per process, for hosts that do not keep
// their own (the command line's check).
var shared Cache

// For is the process's shared Cache.For.
func For(path string) *toolrule.Catalog { return shared.For(path) }

// ForPrompt is the process's shared Cache.ForPrompt.
func ForPrompt(name, configured string) *toolrule.Catalog { return shared.ForPrompt(name, configured) }

// ForPrompt returns the catalog a run of the prompt file at name would
// see: the built-ins plus the configured tools file, else the
// forge-tools.json at or above the prompt's folder when the prompt is a
// file on disk (a prompt held only in memory gets the built-ins).
func (k *Cache) ForPrompt(name, configured string) *toolrule.Catalog {
	dir := ""
	if configured == "" {
		dir = PromptDir(name)
	}
	return k.For(Resolve(configured, dir))
}

// PromptDir is where the search for a prompt's forge-tools.json starts:
// the folder of the prompt file name when it is a file on disk, else ""
// (a prompt held only in memory, an unsaved buffer: no search). The
// checker (ForPrompt) and a run (engine/session) start from here.
func PromptDir(name string) string {
	if name == "" {
		return ""
	}
	if fi, err := os.Stat(name); err == nil && !fi.IsDir() {
		return filepath.Dir(name)
	}
	return ""
}
