package lsp

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// document is one open text document.
type document struct {
	// uri is spelled as the client sent it on didOpen; replies and
	// notifications use this spelling, the map key is normalised.
	uri     protocol.DocumentURI
	version int32
	text    []byte
	// snap is the parse of the current version, built lazily and dropped
	// again when the document has not been used for a while (keepSnap).
	snap    *snapshot
	lastUse uint64

	// Diagnostics bookkeeping: gen counts scheduled analyses so a finished
	// one can tell whether it is still the newest; cancel stops it.
	gen       uint64
	cancel    context.CancelFunc
	published bool // the last publish was non-empty
	// prompt records whether the last analysed version was a prompt, so
	// that closing other Markdown publishes nothing.
	prompt bool
}

func (d *document) cancelDiagnostics() {
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
	}
}

// snapshot is the immutable analysis state of one document version.
type snapshot struct {
	uri     protocol.DocumentURI
	version int32
	file    *source.File
	// prompt is nil when the document is too large to analyse.
	prompt *parse.Prompt
	// isPrompt is true when the frontmatter declares promptforge:; only
	// such documents get diagnostics and features.
	isPrompt bool
	tooLarge bool
	// parsePanic records a parser panic (a bug, logged once).
	parsePanic string
	// findings are filled by analyse; analysed tells nil from not run.
	findings []analysis.Diagnostic
	analysed bool
}

// uriKey normalises a document URI for the map: file URIs compare by
// their decoded path (clients differ in percent-encoding and in the case
// of Windows drive letters); other schemes compare verbatim.
func uriKey(u protocol.DocumentURI) string {
	s := string(u)
	if !strings.HasPrefix(s, "file:") {
		return s
	}
	pu, err := url.Parse(s)
	if err != nil {
		return s
	}
	p := pu.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = "/" + strings.ToLower(p[1:2]) + p[2:]
	}
	return "file://" + p
}

// fileName is the name used in engine spans and messages.
func fileName(u protocol.DocumentURI) string {
	s := string(u)
	if strings.HasPrefix(s, "file:") {
		if pu, err := url.Parse(s); err == nil && pu.Path != "" {
			return pu.Path
		}
	}
	return s
}

// parses counts the prompts parsed by newSnapshot (tests check that a
// version is not parsed twice).
var parses atomic.Int64

// newSnapshot parses text. It runs outside the server lock. Whether the
// document is a prompt is decided by parse.DeclaresPromptforge, the same
// test `forge-lsp check` uses for folders: a prompt whose frontmatter is
// broken still counts (and gets its diagnostics), and other Markdown is
// never parsed at all.
func newSnapshot(uri protocol.DocumentURI, version int32, text []byte, maxSize int) (snap *snapshot) {
	snap = &snapshot{uri: uri, version: version}
	snap.isPrompt = parse.DeclaresPromptforge(text)
	if !snap.isPrompt || len(text) > maxSize {
		snap.tooLarge = snap.isPrompt
		snap.file = source.NewFile(fileName(uri), text)
		return snap
	}
	defer func() {
		// The parser promises not to panic; if it does anyway the document
		// simply gets no features instead of taking the server down.
		if r := recover(); r != nil {
			snap.prompt = nil
			snap.isPrompt = false
			snap.parsePanic = fmt.Sprint(r)
		}
		if snap.file == nil {
			snap.file = source.NewFile(fileName(uri), text)
		}
	}()
	// The parser's file (line table and all) is the snapshot's file.
	parses.Add(1)
	snap.prompt = parse.Parse(fileName(uri), text)
	if snap.prompt != nil && snap.prompt.File != nil {
		snap.file = snap.prompt.File
	}
	return snap
}

// snapshotOf returns the current snapshot of d, parsing if needed. Called
// with s.mu held.
func (s *server) snapshotOf(d *document) *snapshot {
	if d.snap == nil || d.snap.version != d.version {
		s.keepSnap(d, newSnapshot(d.uri, d.version, d.text, s.opts.MaxAnalyzedSize))
	}
	s.useTick++
	d.lastUse = s.useTick
	return d.snap
}

// maxSnapshots bounds how many documents keep their parse tree and index
// in memory. A tree with compiled Lua and the token index costs about ten
// times the text; an editor with hundreds of open prompts only works in a
// few, and an evicted one is re-parsed on its next request (a few ms).
const maxSnapshots = 16

// keepSnap stores snap on d and evicts the least recently used snapshots
// beyond maxSnapshots. Called with s.mu held.
func (s *server) keepSnap(d *document, snap *snapshot) {
	d.snap = snap
	s.useTick++
	d.lastUse = s.useTick
	n := 0
	for _, o := range s.docs {
		if o.snap != nil {
			n++
		}
	}
	for ; n > maxSnapshots; n-- {
		var lru *document
		for _, o := range s.docs {
			if o.snap != nil && o != d && (lru == nil || o.lastUse < lru.lastUse) {
				lru = o
			}
		}
		if lru == nil {
			return
		}
		lru.snap = nil
	}
}

// promptAt returns the snapshot for uri when it is an open prompt that
// features may work on, or nil.
func (s *server) promptAt(u protocol.DocumentURI) *snapshot {
	d := s.docs[uriKey(u)]
	if d == nil {
		return nil
	}
	snap := s.snapshotOf(d)
	if !snap.isPrompt || snap.prompt == nil {
		return nil
	}
	return snap
}

// sanitize makes client text safe to index: invalid UTF-8 (possible when a
// client sends raw bytes through a lenient encoder) becomes U+FFFD so that
// offsets and UTF-16 columns stay consistent.
func sanitize(text string) []byte {
	if utf8.ValidString(text) {
		return []byte(text)
	}
	return []byte(strings.ToValidUTF8(text, "\uFFFD"))
}

func (s *server) didOpen(ctx context.Context, p *protocol.DidOpenTextDocumentParams) (any, error) {
	key := uriKey(p.TextDocument.URI)
	if old := s.docs[key]; old != nil {
		old.cancelDiagnostics()
	}
	d := &document{uri: p.TextDocument.URI, version: p.TextDocument.Version, text: sanitize(p.TextDocument.Text)}
	s.docs[key] = d
	s.scheduleDiagnostics(d, 0)
	return nil, nil
}

func (s *server) didChange(ctx context.Context, p *protocol.DidChangeTextDocumentParams) (any, error) {
	d := s.docs[uriKey(p.TextDocument.URI)]
	if d == nil {
		// A change to a document that was never opened: nothing to apply
		// it to (full sync needs the whole text, which we do have, but the
		// client is out of step; ignoring is what the protocol allows).
		s.logger.Printf("didChange for unopened document %s ignored", p.TextDocument.URI)
		return nil, nil
	}
	if len(p.ContentChanges) == 0 {
		return nil, nil
	}
	// Full sync: the last change holds the whole text (pitfall 3).
	d.text = sanitize(p.ContentChanges[len(p.ContentChanges)-1].Text)
	d.version = p.TextDocument.Version
	d.snap = nil
	s.scheduleDiagnostics(d, s.opts.Debounce)
	return nil, nil
}

func (s *server) didSave(ctx context.Context, p *protocol.DidSaveTextDocumentParams) (any, error) {
	return nil, nil
}

func (s *server) didClose(ctx context.Context, p *protocol.DidCloseTextDocumentParams) (any, error) {
	key := uriKey(p.TextDocument.URI)
	d := s.docs[key]
	if d == nil {
		return nil, nil
	}
	d.cancelDiagnostics()
	d.gen++
	delete(s.docs, key)
	if d.published || d.prompt {
		// Clear what the editor shows; an empty list, never null.
		s.publish(d.uri, d.version, []protocol.Diagnostic{})
	}
	return nil, nil
}

// docNotOpen is the error for requests about unknown documents.
func docNotOpen(u protocol.DocumentURI) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "document not open: %s", u)
}
