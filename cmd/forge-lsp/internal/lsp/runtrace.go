package lsp

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Runs started from the editor keep a trace (docs/debugging.md#run-traces)
// in .forge/runs of the workspace folder that holds the prompt: one
// JSON-lines file per run, named by its start time and the prompt, the
// last runTracesKept of them. The folder carries its own .gitignore.
// Unsaved buffers outside every workspace folder get no trace.
const (
	runTraceDir   = ".forge/runs"
	runTracesKept = 20
)

// runTrace opens the trace file of a run of path, for
// session.Options.Trace; end flushes and closes it and prunes old traces.
// w is nil when the run gets no trace (no workspace folder holds path, or
// the folder is not writable).
func (s *server) runTrace(path string) (w io.Writer, end func()) {
	noop := func() {}
	s.mu.Lock()
	roots := append([]string(nil), s.roots...)
	s.mu.Unlock()
	root := ""
	for _, r := range roots {
		if source.InDir(r, path) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" || !filepath.IsAbs(path) {
		return nil, noop
	}
	dir := filepath.Join(root, filepath.FromSlash(runTraceDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, noop
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitignore")); err != nil {
		_ = os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# run traces written by forge-lsp\n*\n"), 0o644)
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	name := time.Now().UTC().Format("20060102T150405.000000") + "-" + base + ".jsonl"
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, noop
	}
	bw := bufio.NewWriter(f)
	return bw, func() {
		_ = bw.Flush()
		_ = f.Close()
		pruneRunTraces(dir, runTracesKept)
	}
}

// pruneRunTraces removes the oldest traces in dir beyond keep (names sort
// by start time).
func pruneRunTraces(dir string, keep int) {
	ms, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	sort.Strings(ms)
	for len(ms) > keep {
		_ = os.Remove(ms[0])
		ms = ms[1:]
	}
}
