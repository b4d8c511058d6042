package lsp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
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
	dir, err := openRunTraceDir(root)
	if err != nil {
		return nil, noop
	}
	if _, err := dir.Lstat(".gitignore"); err != nil {
		if g, err := dir.OpenFile(".gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			_, _ = g.WriteString("# run traces written by forge-lsp\n*\n")
			_ = g.Close()
		}
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	name := time.Now().UTC().Format("20060102T150405.000000") + "-" + base + ".jsonl"
	f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		_ = dir.Close()
		return nil, noop
	}
	bw := bufio.NewWriter(f)
	return bw, func() {
		_ = bw.Flush()
		_ = f.Close()
		pruneRunTraces(dir, runTracesKept)
		_ = dir.Close()
	}
}

// openRunTraceDir opens .forge/runs under root, creating it. Each of its
// two folders must be a real folder, not a link: a repository may commit
// .forge/runs as a link to anything, and the server writes and deletes
// there (docs/security.md#writes). Everything after goes through the
// returned root, which a link cannot leave.
func openRunTraceDir(root string) (*os.Root, error) {
	cur := root
	for _, seg := range strings.Split(runTraceDir, "/") {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		case !fi.IsDir():
			return nil, fmt.Errorf("%s is not a folder (a link?): run traces are not kept", cur)
		}
	}
	return os.OpenRoot(cur)
}

// runTraceName matches the names runTrace gives.
var runTraceName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{6}-.*\.jsonl$`)
})

// pruneRunTraces removes the oldest traces in dir beyond keep (names sort
// by start time). Only files the server wrote count: a regular file (not
// a link) with a trace's name whose first event is run.start; anything
// else a repository put there is left alone.
func pruneRunTraces(dir *os.Root, keep int) {
	d, err := dir.Open(".")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	sort.Strings(names)
	var ours []string
	for _, n := range names {
		if runTraceName().MatchString(n) && isRunTrace(dir, n) {
			ours = append(ours, n)
		}
	}
	for len(ours) > keep {
		_ = dir.Remove(ours[0])
		ours = ours[1:]
	}
}

// isRunTrace reports whether name in dir is a regular file starting with
// a trace's run.start event.
func isRunTrace(dir *os.Root, name string) bool {
	fi, err := dir.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := dir.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(runTraceHead))
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == runTraceHead
}

// runTraceHead is how every trace file begins (engine/trace NewWriter).
const runTraceHead = `{"ev":"run.start"`
