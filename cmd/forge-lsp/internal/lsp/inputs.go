package lsp

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"go.lsp.dev/protocol"
)

// A snapshot holds every input its results are computed from: the text
// and version, the model catalog (fixed when the snapshot is made) and
// the workspace configuration and tool catalog (inputs, resolved once,
// outside the server lock, by the first request or diagnostics job that
// needs them). Nothing derived from a snapshot reads a file or a server
// field afterwards, so a result can never mix two versions of an input.
// When an input changes, didModify makes new snapshots and republishes.

// inputs are a snapshot's resolved files besides its text.
type inputs struct {
	// config is the workspace configuration (.forge-lsp.json found from
	// the file's folder, the configured tools file, the catalog); never
	// nil.
	config *analysis.Config
	// catalog is the tool catalog a run of the document would see.
	catalog *catalog
}

// inputs returns the snapshot's inputs, resolving them on first use.
// Request goroutines and diagnostics jobs call it before they lock.
func (snap *snapshot) inputs() inputs {
	in, _ := snap.in.get(func() (inputs, bool) {
		if snap.resolve == nil {
			cat := toolrule.NewCatalog("", nil, nil)
			return inputs{config: &analysis.Config{Catalog: cat}, catalog: &catalog{cat}}, true
		}
		return snap.resolve(), true
	})
	return in
}

// resolver returns how a snapshot of the document named name resolves
// its inputs: the configured tools file as the setting is now, the
// server's catalog cache, the configuration found from the document's
// folder (folderInputs). It reads nothing until called.
func (s *server) resolver(uri protocol.DocumentURI, name string) func() inputs {
	toolsFile := s.analysisToolsFile()
	cats := s.cats
	folders := s.folders
	return func() inputs {
		cfg := &analysis.Config{}
		dir := ""
		if strings.HasPrefix(string(uri), "file:") {
			dir = filepath.Dir(name)
			found, tools := folders.get(dir, toolsFile)
			if found != nil {
				c := *found // the cached one is shared: never written
				cfg = &c
			}
			cfg.ToolsFile = toolsFile
			cat := cats.For(tools)
			cfg.Catalog = cat
			return inputs{config: cfg, catalog: &catalog{cat}}
		}
		cfg.ToolsFile = toolsFile
		cat := cats.For(toolcat.Resolve(toolsFile, dir))
		cfg.Catalog = cat
		return inputs{config: cfg, catalog: &catalog{cat}}
	}
}

// folderInputs keeps, per folder, what resolving a snapshot's inputs
// finds on disk: the workspace configuration (.forge-lsp.json at or
// above the folder, read and decoded) and the tools file a run would use
// (the configured one, else the nearest forge-tools.json). Every edit
// makes a snapshot, and both searches walk every folder up to the root;
// a folder's answer is kept while nothing it was found from changed:
// each folder searched (a file created, removed or renamed in a folder
// changes the folder's modification time) and the configuration file
// read, checked by one stat each. An unreadable configuration is not
// kept, nor is an answer whose files were modified within
// fsread.RacyWindow of the search (the file system's clock may not have
// ticked since), and a change the file watcher reports drops every
// answer (inputsChanged). The tools file's contents
// are the catalog cache's (toolcat.Cache.For). Safe for concurrent use.
type folderInputs struct {
	mu sync.Mutex
	m  map[folderKey]*folderEntry
	// racy is how recent a modification keeps an answer from being kept:
	// fsread.RacyWindow, unless a test sets it (zero means that).
	racy time.Duration
}

type folderKey struct{ dir, toolsFile string }

type folderEntry struct {
	cfg    *analysis.Config // nil: none, or unreadable
	tools  string           // the tools file (toolcat.Resolve); "" none
	stamps []pathStamp
}

// pathStamp is what one stat tells of a path: whether it exists, and
// its stamp when it does.
type pathStamp struct {
	path   string
	exists bool
	fsread.Stamp
}

func stampPath(path string) pathStamp {
	st, ok := fsread.StatStamp(path)
	return pathStamp{path: path, exists: ok, Stamp: st}
}

func (st pathStamp) same(o pathStamp) bool {
	return st.exists == o.exists && st.Size == o.Size && st.ModTime.Equal(o.ModTime)
}

// maxFolders bounds the cache: a server that saw many folders keeps the
// recent ones.
const maxFolders = 256

// get returns the configuration found from dir (nil for none; shared,
// never to be written) and the tools file a prompt in dir uses with the
// tools-file setting toolsFile.
func (f *folderInputs) get(dir, toolsFile string) (*analysis.Config, string) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	key := folderKey{dir, toolsFile}
	f.mu.Lock()
	e := f.m[key]
	f.mu.Unlock()
	if e != nil && e.fresh() {
		return e.cfg, e.tools
	}
	// The folders are stamped before they are searched: a change after
	// the stamp shows next time.
	start := time.Now()
	var stamps []pathStamp
	for d := dir; ; {
		stamps = append(stamps, stampPath(d))
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	cfg, err := analysis.FindConfig(dir)
	if err != nil {
		// A configuration that does not decode (or cannot be read) is
		// none, and searched again next time: fixing it in place changes
		// no folder.
		cfg = nil
	}
	if cfg != nil && cfg.Path != "" {
		stamps = append(stamps, stampPath(cfg.Path))
	}
	tools := toolcat.Resolve(toolsFile, dir)
	e = &folderEntry{cfg: cfg, tools: tools, stamps: stamps}
	racy := f.racy
	if racy == 0 {
		racy = fsread.RacyWindow
	}
	trusted := err == nil
	for _, st := range stamps {
		if st.exists && !st.ModTime.Before(start.Add(-racy)) {
			trusted = false
		}
	}
	f.mu.Lock()
	if trusted {
		if f.m == nil || len(f.m) >= maxFolders {
			f.m = map[folderKey]*folderEntry{}
		}
		f.m[key] = e
	} else {
		delete(f.m, key)
	}
	f.mu.Unlock()
	return cfg, tools
}

// fresh reports whether every path e was found from is as it was.
func (e *folderEntry) fresh() bool {
	for _, st := range e.stamps {
		if !st.same(stampPath(st.path)) {
			return false
		}
	}
	return true
}

// clear drops every kept answer.
func (f *folderInputs) clear() {
	f.mu.Lock()
	f.m = nil
	f.mu.Unlock()
}

// didModify is the one path by which documents get new snapshots: an
// edit of one document (docs holds it, delay is the debounce), or a
// change of an input every document reads (docs nil): the workspace
// configuration, a tools file, the tools-file setting, the gateway file
// or the model catalog. Each affected document drops its snapshot, is
// analysed again from its text and the inputs as they are now, and its
// diagnostics are published again; a client that pulls them is asked to.
// Called with s.mu held.
func (s *server) didModify(docs []*document, delay time.Duration) {
	all := docs == nil
	if all {
		for _, d := range s.docs {
			docs = append(docs, d)
		}
	}
	for _, d := range docs {
		d.mod++
		d.snap = nil
		s.scheduleDiagnostics(d, delay)
	}
	if all {
		s.refreshPulled()
	}
}

// outbox holds what the server sends the client (replies, diagnostics,
// messages, progress) until one goroutine writes it, so that nothing
// writes to the client while holding the server lock: a client that stops
// reading blocks that goroutine, never the server. Messages leave in the
// order they were queued (a run's last progress report before its reply);
// a document's queued diagnostics are replaced by newer ones for it, so
// the queue stays bounded by the open documents and the requests in
// flight while the client is not reading.
type outbox struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []outMsg
	pending map[protocol.DocumentURI]int // queued diagnostics by document
	closed  bool
}

type outMsg struct {
	method string
	params any
	// reply, when set, writes a reply instead.
	reply func()
}

func newOutbox() *outbox {
	o := &outbox{pending: map[protocol.DocumentURI]int{}}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// send queues a notification; it never blocks on the client.
func (o *outbox) send(method string, params any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if p, ok := params.(*publishParams); ok && method == protocol.MethodTextDocumentPublishDiagnostics {
		if i, queued := o.pending[p.URI]; queued {
			o.queue[i].params = p
			return
		}
		o.pending[p.URI] = len(o.queue)
	}
	o.queue = append(o.queue, outMsg{method: method, params: params})
	o.cond.Signal()
}

// sendReply queues a reply; write runs on the outbox's goroutine.
func (o *outbox) sendReply(write func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.queue = append(o.queue, outMsg{reply: write})
	o.cond.Signal()
}

// run writes queued messages, notifications with write, until ctx is
// done.
func (o *outbox) run(ctx context.Context, write func(method string, params any)) {
	stop := context.AfterFunc(ctx, func() {
		o.mu.Lock()
		o.closed = true
		o.cond.Broadcast()
		o.mu.Unlock()
	})
	defer stop()
	for {
		o.mu.Lock()
		for len(o.queue) == 0 && !o.closed {
			o.cond.Wait()
		}
		if o.closed {
			o.mu.Unlock()
			return
		}
		batch := o.queue
		o.queue = nil
		clear(o.pending)
		o.mu.Unlock()
		for _, m := range batch {
			if m.reply != nil {
				m.reply()
			} else {
				write(m.method, m.params)
			}
		}
	}
}
