package mcp

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Watch re-resolves the catalog when a prompt, prompts.toml or its .env
// changes, once the change has settled for watch_debounce, until ctx
// ends. It polls (a stat of the prompts folder every debounce interval),
// which needs no platform watcher and cannot lose a registration.
func (s *Server) Watch(ctx context.Context) {
	every := s.config().Server.WatchDebounce
	if every <= 0 {
		every = DefaultWatchDebounce
	}
	t := time.NewTicker(every)
	defer t.Stop()
	last := s.resolvedPrint
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.fingerprint()
		switch {
		case now != last:
			// Changed during this window: wait for it to settle.
			last, pending = now, true
		case pending:
			pending = false
			s.Reload()
		}
	}
}

// fingerprint hashes the names, sizes and modification times of the
// files a reload reads.
func (s *Server) fingerprint() uint64 {
	h := fnv.New64a()
	add := func(p string, fi os.FileInfo) {
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", p, fi.Size(), fi.ModTime().UnixNano())
	}
	if s.config().Path != "" {
		for _, p := range []string{s.config().Path, strings.TrimSuffix(s.config().Path, filepath.Ext(s.config().Path)) + ".env"} {
			if fi, err := os.Stat(p); err == nil {
				add(p, fi)
			}
		}
	}
	n := 0
	root := s.config().Prompts
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			return skipDir(p, root)
		}
		if n++; n > maxCatalogFiles {
			return filepath.SkipAll
		}
		if fi, err := d.Info(); err == nil {
			add(p, fi)
		}
		return nil
	})
	return h.Sum64()
}

// Reload re-reads prompts.toml (when the server has one) and re-resolves
// the catalog, keeping broken prompts listed with their problems. A
// configuration that no longer loads or resolves leaves the catalog as it
// was, and the problem is logged. Server settings (bind, token, slots,
// deadlines) keep their start-up values.
func (s *Server) Reload() {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	cfg := s.config()
	old := cfg
	if cfg.Path != "" {
		c, err := LoadConfig(cfg.Path, LookupFunc(s.env))
		if err != nil {
			s.log.Warn("prompts.toml no longer loads; serving the previous catalog", "error", err.Error())
			return
		}
		c.Server = old.Server
		cfg = c
	}
	cat, err := Resolve(cfg, true)
	if err != nil {
		s.log.Warn("the catalog no longer resolves; serving the previous one", "error", err.Error())
		return
	}
	s.setConfig(cfg)
	s.forgetModels()
	s.catalog.Store(cat)
	s.syncPrompts(cat)
	broken := 0
	for _, e := range cat.Entries {
		if e.Problem != "" {
			broken++
		}
	}
	s.log.Info("catalog reloaded", "prompts", len(cat.Entries), "broken", broken)
}
