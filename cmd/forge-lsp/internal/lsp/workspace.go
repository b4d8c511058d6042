package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The workspace: every prompt under the workspace folders, open or not.
// Closed prompts are read from disk, parsed and checked once (on start
// and when the client reports a change through
// workspace/didChangeWatchedFiles), and only their diagnostics and symbols
// are kept, never their parse trees, so memory stays bounded by the
// findings rather than by the sources.

// maxWorkspaceFiles bounds the prompts considered, maxWorkspaceEntries the
// walk itself (a workspace folder may be a home directory).
const (
	maxWorkspaceFiles   = 20000
	maxWorkspaceEntries = 200000
)

// wsFile is what the server keeps of a closed prompt.
type wsFile struct {
	uri protocol.DocumentURI
	// stamp is the modification time and size the entry was built from.
	stamp   string
	diags   []protocol.Diagnostic
	symbols []protocol.SymbolInformation
}

// workspaceState is guarded by server.mu.
type workspaceState struct {
	files map[string]*wsFile // by uriKey
	// scanned is closed when the first walk has finished.
	scanned chan struct{}
}

// pullDiagnostics reports whether the client pulls diagnostics (LSP
// 3.17); then the server answers textDocument/diagnostic and
// workspace/diagnostic and publishes nothing itself.
func (s *server) pullDiagnostics() bool { return s.client.features.Diagnostic != nil }

// startWorkspace walks the workspace folders in the background and
// checks every prompt that is not open. Called with s.mu held.
func (s *server) startWorkspace() {
	s.ws.files = map[string]*wsFile{}
	s.ws.scanned = make(chan struct{})
	roots := append([]string(nil), s.roots...)
	done := s.ws.scanned
	s.goBackground("workspace scan", func() {
		defer close(done)
		var paths []string
		entries := 0
		for _, root := range roots {
			_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if entries++; entries > maxWorkspaceEntries || s.ctx.Err() != nil {
					return filepath.SkipAll
				}
				if err != nil {
					return nil
				}
				if d.IsDir() {
					name := d.Name()
					if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
						return filepath.SkipDir
					}
					return nil
				}
				if len(paths) >= maxWorkspaceFiles {
					return filepath.SkipAll
				}
				if strings.HasSuffix(path, ".md") {
					paths = append(paths, path)
				}
				return nil
			})
		}
		for _, p := range paths {
			if s.ctx.Err() != nil {
				return
			}
			s.checkFile(p)
		}
	})
}

// checkFile (re)checks a file on disk unless it is open, and publishes
// its diagnostics when the client does not pull them. It runs outside
// the lock.
func (s *server) checkFile(path string) {
	uri := protocol.DocumentURI("file://" + filepath.ToSlash(path))
	key := uriKey(uri)
	fi, statErr := os.Stat(path)
	s.mu.Lock()
	if s.docs[key] != nil {
		s.mu.Unlock()
		return // open documents are the editor's
	}
	old := s.ws.files[key]
	stamp := ""
	if statErr == nil {
		stamp = fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
	}
	if old != nil && old.stamp == stamp && statErr == nil {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()

	var entry *wsFile
	// Only regular files are read: opening a named pipe blocks, and a
	// link to a device has no end.
	if statErr == nil && fi.Mode().IsRegular() && fi.Size() <= int64(s.opts.MaxAnalyzedSize) {
		if isPromptFile(path) {
			if text, err := fsread.ReadFile(path, fsread.Prompt); err == nil && parse.DeclaresPromptforge(text) {
				entry = s.checkText(uri, text)
				entry.stamp = stamp
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docs[key] != nil || s.state != stateRunning {
		return
	}
	if entry == nil {
		if old != nil {
			delete(s.ws.files, key)
			if !s.pullDiagnostics() && len(old.diags) > 0 {
				s.publish(old.uri, 0, []protocol.Diagnostic{})
			}
			s.refreshPulled()
		}
		return
	}
	s.ws.files[key] = entry
	if !s.pullDiagnostics() && (len(entry.diags) > 0 || old != nil && len(old.diags) > 0) {
		s.publish(uri, 0, entry.diags)
	}
	if old != nil {
		s.refreshPulled() // a change after the first walk
	}
}

// refreshPulled asks a pulling client to pull again (LSP 3.17's
// workspace/diagnostic/refresh) when something it cannot see changed: a
// file on disk, the model catalog. Called with s.mu held; the request
// goes out from a goroutine.
func (s *server) refreshPulled() {
	if !s.pullDiagnostics() || !s.client.diagnosticRefresh {
		return
	}
	s.goBackground("workspace/diagnostic/refresh", func() {
		if _, err := s.conn.Call(s.ctx, methodDiagnosticRefresh, nil, nil); err != nil {
			s.logger.Printf("%s: %v", methodDiagnosticRefresh, err)
		}
	})
}

// checkText parses and checks one closed prompt and keeps its
// diagnostics and symbols.
func (s *server) checkText(uri protocol.DocumentURI, text []byte) *wsFile {
	if !s.analysisSlots.acquire(s.ctx, time.Time{}) {
		return &wsFile{uri: uri}
	}
	defer s.analysisSlots.release()
	s.mu.Lock()
	models := s.modelCatalog
	s.mu.Unlock()
	snap := s.snapshotFor(nil, nil, nil, uri, 0, text, false, models)
	s.analyse(s.ctx, snap)
	if snap.prompt != nil && len(models) > 0 {
		snap.proseBudgets()
	}
	e := &wsFile{uri: uri, diags: diagnosticsOf(snap)}
	if snap.prompt != nil {
		e.symbols = promptSymbols(snap)
	}
	return e
}

// workspaceSymbolKinds are the protocol's kinds of workspace symbols.
var workspaceSymbolKinds = map[features.SymbolKind]protocol.SymbolKind{
	features.SymbolH1:      protocol.SymbolKindModule,
	features.SymbolSection: protocol.SymbolKindNamespace,
	features.SymbolTool:    protocol.SymbolKindFunction,
	features.SymbolModel:   protocol.SymbolKindConstant,
}

// promptSymbols adapts features.WorkspaceSymbols for workspace/symbol.
func promptSymbols(snap *snapshot) []protocol.SymbolInformation {
	syms := features.WorkspaceSymbols(snap.feat)
	out := make([]protocol.SymbolInformation, 0, len(syms))
	for _, sym := range syms {
		out = append(out, protocol.SymbolInformation{Name: sym.Name, Kind: workspaceSymbolKinds[sym.Kind], ContainerName: sym.Container,
			Location: protocol.Location{URI: snap.uri, Range: lspRange(snap.file, sym.Span)}})
	}
	return out
}

// workspaceSymbol matches the query (case-insensitive, its characters in
// order) against the symbols of open prompts and of the workspace's
// closed prompts.
func (s *server) workspaceSymbol(ctx context.Context, p *protocol.WorkspaceSymbolParams) (any, error) {
	out := []protocol.SymbolInformation{}
	q := strings.ToLower(p.Query)
	seen := map[string]bool{}
	add := func(syms []protocol.SymbolInformation) {
		for _, sym := range syms {
			if fuzzyMatch(strings.ToLower(sym.Name), q) {
				out = append(out, sym)
			}
		}
	}
	// The open documents as the request found them (pinned, parsed
	// outside s.mu); the handler runs without s.mu and takes it only to
	// read the closed files' symbols.
	pin := pinOf(ctx)
	if pin == nil {
		return out, nil // not a request (a notification)
	}
	for key, snap := range pin.all {
		seen[key] = true
		if snap.isPrompt && snap.prompt != nil {
			add(promptSymbols(snap))
		}
	}
	var closed [][]protocol.SymbolInformation
	s.mu.Lock()
	for key, f := range s.ws.files {
		if !seen[key] {
			closed = append(closed, f.symbols)
		}
	}
	s.mu.Unlock()
	for _, syms := range closed {
		add(syms)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Location.URI != out[j].Location.URI {
			return out[i].Location.URI < out[j].Location.URI
		}
		return before(out[i].Location.Range.Start, out[j].Location.Range.Start)
	})
	return out, nil
}

// fuzzyMatch reports whether q's characters appear in name in order.
func fuzzyMatch(name, q string) bool {
	for _, r := range q {
		i := strings.IndexRune(name, r)
		if i < 0 {
			return false
		}
		name = name[i+len(string(r)):]
	}
	return true
}

// fileEvent is one workspace/didChangeWatchedFiles change.
type fileEvent struct {
	URI  protocol.DocumentURI `json:"uri"`
	Type int                  `json:"type"` // 1 created, 2 changed, 3 deleted
}

func (s *server) didChangeWatchedFiles(ctx context.Context, p *struct {
	Changes []fileEvent `json:"changes"`
}) (any, error) {
	var paths []string
	inputs, gatewayFile := false, false
	for _, c := range p.Changes {
		if !strings.HasPrefix(string(c.URI), "file:") {
			continue
		}
		switch name := string(c.URI); {
		case s.isGatewayFile(fileName(c.URI)):
			gatewayFile = true
		case strings.HasSuffix(name, ".md"):
			paths = append(paths, fileName(c.URI))
		case path.Base(name) == toolrule.WorkspaceFile || path.Base(name) == analysis.ConfigFileName:
			inputs = true
		}
	}
	if gatewayFile {
		// The model catalog is read again; when it arrives, every
		// document gets a snapshot with it (refreshModelCatalog).
		s.modelCatalogKey = ""
		s.refreshModelCatalog()
	}
	if inputs {
		s.inputsChanged()
	}
	if len(paths) == 0 {
		return nil, nil
	}
	s.goBackground("watched files", func() {
		for _, path := range paths {
			s.checkFile(path)
		}
	})
	return nil, nil
}

// isGatewayFile reports whether path is the configured gateway file.
// Called with s.mu held.
func (s *server) isGatewayFile(path string) bool {
	gw := s.cfg.GatewayConfig
	if gw == "" {
		return false
	}
	abs, err := filepath.Abs(gw)
	return err == nil && filepath.Clean(path) == abs
}

// inputsChanged handles a change to a file the analysis of every open
// document reads besides its text: the workspace configuration
// (.forge-lsp.json) or a tools file (forge-tools.json). Each open
// document gets a new snapshot, analysed with the files as they are now,
// and its findings are published again; clients that pull diagnostics
// are asked to pull. Called with s.mu held.
func (s *server) inputsChanged() {
	s.folders.clear()
	s.didModify(nil, 0)
}

// documentDiagnosticReport is LSP 3.17's full document diagnostic report.
type documentDiagnosticReport struct {
	Kind  string                `json:"kind"`
	Items []protocol.Diagnostic `json:"items"`
}

type workspaceDocumentReport struct {
	Kind    string                `json:"kind"`
	URI     protocol.DocumentURI  `json:"uri"`
	Version *int32                `json:"version"`
	Items   []protocol.Diagnostic `json:"items"`
}

// Pull diagnostic methods (LSP 3.17).
const (
	methodDocumentDiagnostic  = "textDocument/diagnostic"
	methodWorkspaceDiagnostic = "workspace/diagnostic"
	methodDiagnosticRefresh   = "workspace/diagnostic/refresh"
)

func (s *server) documentDiagnostic(ctx context.Context, p *struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
}) (any, error) {
	if pin := pinOf(ctx); pin != nil && pin.snap != nil {
		// The open document as the request found it, analysed before the
		// lock (needs).
		return &documentDiagnosticReport{Kind: "full", Items: diagnosticsOf(pin.snap)}, nil
	}
	if pinOf(ctx) != nil {
		// The handler runs without s.mu (requests.go).
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	if f := s.ws.files[uriKey(p.TextDocument.URI)]; f != nil {
		return &documentDiagnosticReport{Kind: "full", Items: nonNil(f.diags)}, nil
	}
	return &documentDiagnosticReport{Kind: "full", Items: []protocol.Diagnostic{}}, nil
}

// workspaceDiagnostic reports every prompt of the workspace: open ones
// at their current version, closed ones as last checked on disk. It
// waits for the first walk of the workspace to finish.
func (s *server) workspaceDiagnostic(ctx context.Context, raw json.RawMessage, reply jsonrpc2.Replier) {
	s.goBackground("workspace/diagnostic", func() {
		s.mu.Lock()
		scanned := s.ws.scanned
		s.mu.Unlock()
		if scanned != nil {
			select {
			case <-scanned:
			case <-ctx.Done():
				_ = reply(s.ctx, nil, jsonrpc2.NewError(requestCancelled, "request cancelled"))
				return
			}
		}
		// Open documents: pinned under the lock, analysed outside it.
		s.mu.Lock()
		pins := make([]docPin, 0, len(s.docs))
		for _, d := range s.docs {
			pins = append(pins, s.pinDoc(d))
		}
		s.mu.Unlock()
		items := []workspaceDocumentReport{}
		for _, pin := range pins {
			snap := s.ready(pin)
			if snap.isPrompt {
				s.analyse(ctx, snap)
				if snap.prompt != nil && len(snap.models) > 0 {
					snap.proseBudgets()
				}
				v := snap.version
				items = append(items, workspaceDocumentReport{Kind: "full", URI: snap.uri, Version: &v, Items: diagnosticsOf(snap)})
			}
		}
		s.mu.Lock()
		for key, f := range s.ws.files {
			if s.docs[key] == nil {
				items = append(items, workspaceDocumentReport{Kind: "full", URI: f.uri, Items: nonNil(f.diags)})
			}
		}
		s.mu.Unlock()
		sort.Slice(items, func(i, j int) bool { return items[i].URI < items[j].URI })
		_ = reply(s.ctx, map[string]any{"items": items}, nil)
	})
}

// watchFiles asks the client to report changes of Markdown files when it
// supports dynamic registration of the file watcher. Called with s.mu
// held; the request goes out from a goroutine (the reply comes through
// the reader this dispatch holds).
func (s *server) watchFiles() {
	if !s.client.watchRegistration {
		return
	}
	// The gateway file (its models and their contexts are the model
	// catalog's) is watched by name: it may lie outside the workspace.
	var gatewayWatch []any
	if gw := s.cfg.GatewayConfig; gw != "" {
		gatewayWatch = append(gatewayWatch, map[string]any{"globPattern": "**/" + filepath.Base(gw)})
	}
	s.goBackground("register file watcher", func() {
		params := map[string]any{"registrations": []any{map[string]any{
			"id": "forge-watch-md", "method": protocol.MethodWorkspaceDidChangeWatchedFiles,
			"registerOptions": map[string]any{"watchers": append([]any{
				map[string]any{"globPattern": "**/*.md"},
				map[string]any{"globPattern": "**/" + toolrule.WorkspaceFile},
				map[string]any{"globPattern": "**/" + analysis.ConfigFileName},
			}, gatewayWatch...)},
		}}}
		if _, err := s.conn.Call(s.ctx, protocol.MethodClientRegisterCapability, params, nil); err != nil {
			s.logger.Printf("client/registerCapability: %v", err)
		}
	})
}

// inWorkspace reports whether path lies under a workspace folder.
func (s *server) inWorkspace(path string) bool {
	for _, r := range s.roots {
		if source.InDir(r, path) {
			return true
		}
	}
	return false
}

// isPromptFile reads the start of a Markdown file to tell whether it is a
// prompt, so that other Markdown in the workspace is never read whole.
func isPromptFile(path string) bool {
	f, _, err := fsread.Open(path, fsread.Prompt)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	return parse.DeclaresPromptforge(head[:n])
}

// nonNil keeps a diagnostics list from being sent as null.
func nonNil(ds []protocol.Diagnostic) []protocol.Diagnostic {
	if ds == nil {
		return []protocol.Diagnostic{}
	}
	return ds
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodWorkspaceSymbol, serve: allDocsMethod(handle((*server).workspaceSymbol)),
		advertise: func(c *serverCapabilities) { c.WorkspaceSymbolProvider = true }},
		feature{method: protocol.MethodWorkspaceDidChangeWatchedFiles, serve: handle((*server).didChangeWatchedFiles)},
		feature{method: methodDocumentDiagnostic, serve: docMethod(handle((*server).documentDiagnostic), needFindings|needBudgetFindings),
			advertise: func(c *serverCapabilities) {
				c.DiagnosticProvider = map[string]any{"identifier": "forge", "interFileDependencies": false, "workspaceDiagnostics": true}
			}},
		feature{method: methodWorkspaceDiagnostic, serve: method{async: (*server).workspaceDiagnostic}}}
})
