package lsp

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
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
	// lines indexes text's lines as the client counts them (LF, CRLF
	// and lone CR), kept current by each change.
	lines *source.Lines
	// snap is the parse of the current version, built lazily and dropped
	// again when the open documents keep more than their budget and this
	// one was used least recently (retain.go).
	snap    *snapshot
	lastUse uint64
	// parsing is the parse of a version in progress (ready), which a
	// request and the diagnostics job asking for that version share.
	parsing *pendingParse
	// reuse is what the parse of the next version can take from the last
	// one (parse.Reuse: its compiled chunks and Markdown regions by
	// position); dropped with the snapshot (retain.go).
	// reuseSeq is the edit count (seq) of the text it was parsed from.
	reuse    *parse.Reuse
	reuseSeq uint64
	// seq counts the changes applied to text; edits says what the last
	// of them changed (see changeSince).
	seq   uint64
	edits editLog
	// mod counts the document's modifications (didModify: edits and
	// input changes); a snapshot is current only at the same count, so
	// one made from inputs an input change replaced is never kept.
	mod uint64

	// Diagnostics bookkeeping: gen counts scheduled analyses so a finished
	// one can tell whether it is still the newest; cancel stops it.
	gen    uint64
	cancel context.CancelFunc
	// scheduledAt is when the last diagnostics job was started: a change
	// within the delay after it is part of a burst.
	scheduledAt time.Time
	published   bool // the last publish was non-empty
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

// snapshot is one document version and what is derived from it. The
// parse is made before the snapshot is shared (newSnapshot) and never
// changes; the derived data (findings, semantic tokens, prose budgets) are
// memos the snapshot owns, computed on first use outside the server lock
// (request goroutines and diagnostics jobs force them before they lock)
// and then read by any number of goroutines.
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

	// findings are the analysis's diagnostics (snapshot.analyse).
	findings memo[[]analysis.Diagnostic]
	// semantic is the encoded full semantic tokens result.
	semantic memo[[]uint32]
	// budgetFindings are the context-budget findings made from the
	// prose budgets (feat.Budgets).
	budgetFindings memo[[]analysis.Diagnostic]
	// feat is what the editor features read (the parse, the catalogs)
	// and their memos: the flow walk, the prose budgets; nil unless
	// prompt is.
	feat *features.Snapshot

	// models is the gateway's model catalog the snapshot is analysed
	// with (nil when there is none); resolve and in are its other inputs
	// (inputs.go).
	models  []gateway.Model
	resolve func() inputs
	in      memo[inputs]
	// mod is the document's modification count it was made at, seq the
	// count of edits of its text.
	mod, seq uint64
}

// current reports whether snap is d's snapshot of its current version
// and inputs. Called with s.mu held.
func (d *document) current(snap *snapshot) bool {
	return snap != nil && snap.version == d.version && snap.mod == d.mod
}

// memo is a value computed once, on first use, by whichever goroutine
// asks first; others asking meanwhile wait for it. A computation that
// gives up (ok false: its request was cancelled) leaves the memo empty
// for the next caller.
type memo[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
}

// get returns the value, computing it with compute if needed.
func (m *memo[T]) get(compute func() (T, bool)) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		if v, ok := compute(); ok {
			m.v, m.done = v, true
		}
	}
	return m.v, m.done
}

// peek returns the value if it has been computed, without computing it.
func (m *memo[T]) peek() (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.v, m.done
}

// program returns the program model of the snapshot's parse, shared with
// the analysis and the other features (program.Of memoises it).
func (s *snapshot) program() *program.Program {
	return program.Of(s.prompt)
}

// flowResult returns the snapshot's flow analysis, computed once (a
// memo of feat); a request whose entry needs it (needFlow) gets it made
// before its handler runs.
func (s *snapshot) flowResult() *flow.Result {
	return s.feat.Flow()
}

// index returns the snapshot's declarations and references, part of the
// analyzer's program model of the same parse (program.SymbolsOf), so
// navigation, hover, completion and the diagnostics share one model.
func (s *snapshot) index() *program.Symbols {
	return program.SymbolsOf(s.prompt)
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
	return newSnapshotAfter(nil, nil, nil, uri, version, text, maxSize)
}

// newSnapshotAfter is newSnapshot for a version of a document whose
// previous parse left prev (nil: none) to reuse; ch, when not nil, says
// which bytes changed since prev's text (parse.ParseEdited); starts, when
// not nil, are text's line starts (source.Lines.Starts), which the parse
// then need not find.
func newSnapshotAfter(prev *parse.Reuse, ch *parse.Change, starts []int, uri protocol.DocumentURI, version int32, text []byte, maxSize int) (snap *snapshot) {
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
	f := source.NewFileLines(fileName(uri), text, starts)
	snap.prompt = parse.ParseFile(prev, ch, f)
	if snap.prompt != nil && snap.prompt.File != nil {
		snap.file = snap.prompt.File
	}
	if snap.prompt != nil {
		snap.feat = features.NewSnapshot(snap.file, snap.prompt, nil, func() *toolrule.Catalog { return snap.inputs().catalog.Catalog })
	}
	return snap
}

// snapshotFor is newSnapshot with the file's LSP positions in the
// negotiated encoding. open says the text is the client's copy of an open
// document (a leading U+FEFF is then a character, not a BOM to skip);
// false is for a file read from disk, whose BOM an editor drops when it
// opens it.
// models is the model catalog as the server had it when the version was
// pinned.
// prev is what the document's previous parse left to reuse, or nil; ch,
// when not nil, what changed since prev's text.
func (s *server) snapshotFor(prev *parse.Reuse, ch *parse.Change, starts []int, uri protocol.DocumentURI, version int32, text []byte, open bool, models []gateway.Model) *snapshot {
	snap := newSnapshotAfter(prev, ch, starts, uri, version, text, s.opts.MaxAnalyzedSize)
	snap.file.UseLSPEncoding(s.client.encoding, open)
	snap.models = models
	if snap.feat != nil {
		snap.feat.Models = models
	}
	snap.resolve = s.resolver(uri, snap.file.Name)
	return snap
}

// snapshotOf returns the current snapshot of d, parsing if needed. It
// parses under s.mu: requests are handed snapshots parsed outside the
// lock instead (pinDoc and ready for a document, allDocsMethod for
// workspace symbols); this is the fallback for a lookup nothing pinned.
// Called with s.mu held.
func (s *server) snapshotOf(d *document) *snapshot {
	if !d.current(d.snap) {
		var ch *parse.Change
		if d.reuse != nil {
			ch = d.changeSince(d.reuseSeq)
		}
		snap := s.snapshotFor(d.reuse, ch, d.lines.Starts(), d.uri, d.version, d.text, true, s.modelCatalog)
		snap.mod, snap.seq = d.mod, d.seq
		s.keepSnap(d, snap)
	}
	s.useTick++
	d.lastUse = s.useTick
	return d.snap
}

// docPin is a document as a request or diagnostics job found it: its
// snapshot when the current version has one, else the text to parse.
type docPin struct {
	d       *document
	snap    *snapshot
	uri     protocol.DocumentURI
	version int32
	text    []byte
	models  []gateway.Model
	mod     uint64
	seq     uint64
	reuse   *parse.Reuse
	// change is what changed between reuse's text and text, when known.
	change *parse.Change
}

// matches reports whether snap is of the pinned version and inputs.
func (p docPin) matches(snap *snapshot) bool {
	return snap != nil && snap.version == p.version && snap.mod == p.mod
}

// pinDoc records d's current version. Called with s.mu held; cheap.
func (s *server) pinDoc(d *document) docPin {
	p := docPin{d: d, uri: d.uri, version: d.version, text: d.text, models: s.modelCatalog, mod: d.mod, seq: d.seq, reuse: d.reuse}
	if d.reuse != nil {
		p.change = d.changeSince(d.reuseSeq)
	}
	if d.current(d.snap) {
		p.snap = d.snap
		s.useTick++
		d.lastUse = s.useTick
	}
	return p
}

// ready returns the pinned version's snapshot, parsing it when needed.
// Called without s.mu: the parse runs outside it; the snapshot is then
// kept on the document if that is still at the version. A version is
// parsed once however many ask for it at the same time (a request during
// the analysis's parse waits for that parse).
func (s *server) ready(p docPin) *snapshot {
	if p.snap != nil {
		return p.snap
	}
	s.mu.Lock()
	for {
		if o := p.d.snap; p.matches(o) {
			s.mu.Unlock()
			return o // parsed since the pin
		}
		pp := p.d.parsing
		if pp == nil || pp.version != p.version || pp.mod != p.mod {
			break
		}
		s.mu.Unlock()
		<-pp.done
		if pp.snap != nil {
			return pp.snap
		}
		s.mu.Lock() // that parse failed: parse here
	}
	pp := &pendingParse{version: p.version, mod: p.mod, done: make(chan struct{})}
	p.d.parsing = pp
	// The document's line index, while it is still the pinned text's
	// (after the debounce it usually is): the parse need not find them.
	var starts []int
	if p.d.seq == p.seq && s.docs[uriKey(p.uri)] == p.d {
		starts = p.d.lines.Starts()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if p.d.parsing == pp {
			p.d.parsing = nil
		}
		s.mu.Unlock()
		close(pp.done)
	}()
	snap := s.snapshotFor(p.reuse, p.change, starts, p.uri, p.version, p.text, true, p.models)
	snap.mod, snap.seq = p.mod, p.seq
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap.prompt != nil && s.docs[uriKey(p.uri)] == p.d && (p.d.reuse == nil || p.seq >= p.d.reuseSeq) {
		p.d.setReuse(snap.prompt.Reuse(), p.seq)
	}
	switch {
	case p.matches(p.d.snap):
		snap = p.d.snap // another request parsed it first: share that one
	case p.d.version == p.version && p.d.mod == p.mod && s.docs[uriKey(p.uri)] == p.d:
		// Kept only while nothing modified the document since the pin: a
		// snapshot of replaced inputs must not outlive didModify.
		s.keepSnap(p.d, snap)
	}
	pp.snap = snap
	return snap
}

// pendingParse is one version's parse in progress; snap is set before
// done closes (nil if the parse panicked).
type pendingParse struct {
	version int32
	mod     uint64
	done    chan struct{}
	snap    *snapshot
}

// setReuse makes r, parsed from the text of edit count seq, what the
// document's next parse reuses, and drops from the parse caches what the
// parse it replaces held that r does not (parse.Forget: the chunks an
// edit replaced, with everything memoised on them). Called with s.mu
// held.
func (d *document) setReuse(r *parse.Reuse, seq uint64) {
	if d.reuse != r {
		parse.Forget(d.reuse, r)
	}
	d.reuse, d.reuseSeq = r, seq
}

// keepSnap stores snap on d and keeps the open documents' retention
// within the budget (retain). Called with s.mu held.
func (s *server) keepSnap(d *document, snap *snapshot) {
	d.snap = snap
	if snap.prompt != nil {
		d.setReuse(snap.prompt.Reuse(), snap.seq)
	}
	s.useTick++
	d.lastUse = s.useTick
	s.retain(d)
}

// promptAt returns the snapshot for uri when it is an open prompt that
// features may work on, or nil. A request on a document gets the snapshot
// pinned when it arrived (withPin) and runs without s.mu, so it never
// looks at the document table; other lookups parse under s.mu.
func (s *server) promptAt(ctx context.Context, u protocol.DocumentURI) *snapshot {
	var snap *snapshot
	if pin := pinOf(ctx); pin != nil {
		if pin.key == uriKey(u) {
			snap = pin.snap
		}
	} else {
		d := s.docs[uriKey(u)]
		if d == nil {
			return nil
		}
		snap = s.snapshotOf(d)
	}
	if snap == nil || !snap.isPrompt || snap.prompt == nil {
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

// clientText is sanitize for a document's whole text, which the decoded
// params own: valid UTF-8 is used in place, not copied (a document's text
// is never written to: an edit makes a new one).
func clientText(text string) []byte {
	if len(text) == 0 || !utf8.ValidString(text) {
		return sanitize(text)
	}
	return unsafe.Slice(unsafe.StringData(text), len(text))
}

func (s *server) didOpen(ctx context.Context, p *protocol.DidOpenTextDocumentParams) (any, error) {
	key := uriKey(p.TextDocument.URI)
	if old := s.docs[key]; old != nil {
		old.cancelDiagnostics()
	}
	text := clientText(p.TextDocument.Text)
	d := &document{uri: p.TextDocument.URI, version: p.TextDocument.Version, text: text, lines: source.NewLines(text)}
	s.docs[key] = d
	s.didModify([]*document{d}, 0)
	return nil, nil
}

// didChangeParams is DidChangeTextDocumentParams with change events whose
// range is a pointer: the library's TextDocumentContentChangeEvent has a
// value Range, so a full-text change and a change of the empty range at
// 0:0 would decode alike.
type didChangeParams struct {
	TextDocument   protocol.VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                          `json:"contentChanges"`
}

// contentChange is one change event: Range nil means Text is the whole
// new document.
type contentChange struct {
	Range *protocol.Range `json:"range,omitempty"`
	Text  string          `json:"text"`
}

func (s *server) didChange(ctx context.Context, p *didChangeParams) (any, error) {
	d := s.docs[uriKey(p.TextDocument.URI)]
	if d == nil {
		// A change to a document that was never opened: there is no text
		// to apply it to, and ignoring it is what the protocol allows.
		s.logger.Printf("didChange for unopened document %s ignored", p.TextDocument.URI)
		return nil, nil
	}
	if len(p.ContentChanges) == 0 {
		return nil, nil
	}
	text, lines, edits, err := applyLogged(d.text, d.lines, p.ContentChanges, s.client.encoding)
	if err != nil {
		// The notification cannot be answered: the document keeps its
		// last good text and version (never a half-applied edit), and the
		// user is told the editor and server are out of step.
		msg := fmt.Sprintf("forge-lsp: change to %s (version %d) not applied: %v; the server keeps version %d: close and reopen the file to resynchronise",
			p.TextDocument.URI, p.TextDocument.Version, err, d.version)
		s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: msg})
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s", msg)
	}
	for _, e := range edits {
		d.seq++
		d.edits.add(d.seq, e)
	}
	d.text, d.lines = text, lines
	d.version = p.TextDocument.Version
	s.didModify([]*document{d}, s.debounce())
	return nil, nil
}

// applyChanges applies change events in order to text and returns the new
// text, or an error (and no text) when any range is out of the document.
// Range columns count in the negotiated encoding (UTF-16 code units by
// default, as LSP says); each range is resolved against the text as the
// changes before it left it. The result never aliases text, which
// snapshots may still hold.
func applyChanges(text []byte, changes []contentChange, enc source.Encoding) ([]byte, error) {
	text, _, _, err := applyLogged(text, source.NewLines(text), changes, enc)
	return text, err
}

// applyLogged is applyChanges for a text whose line index is lines: it
// returns the new text and its index. On success lines itself may have
// been updated and returned; on an error neither text nor lines has
// changed. Each ranged change costs a binary search and a walk of its
// lines for the offsets, the edit, and one copy of the text (snapshots
// hold the old one), wherever in the document it is.
// It also returns, per change, which bytes it changed.
func applyLogged(text []byte, lines *source.Lines, changes []contentChange, enc source.Encoding) ([]byte, *source.Lines, []parse.Change, error) {
	// owned: text is this call's own copy, which a change of the same
	// length may write in place; fresh: text is not the caller's.
	owned, fresh := false, false
	edits := make([]parse.Change, 0, len(changes))
	if len(changes) > 1 {
		// A later change may fail after an earlier one updated the index.
		lines = lines.Clone()
	}
	for i, c := range changes {
		if c.Range == nil {
			old := text
			text, owned, fresh = clientText(c.Text), false, true
			lines = source.NewLines(text)
			edits = append(edits, changed(old, text))
			continue
		}
		start, err := changeOffset(text, lines, c.Range.Start, enc)
		if err == nil {
			var end int
			end, err = changeOffset(text, lines, c.Range.End, enc)
			if err == nil && end < start {
				err = fmt.Errorf("range end %d:%d is before its start %d:%d", c.Range.End.Line, c.Range.End.Character, c.Range.Start.Line, c.Range.Start.Character)
			}
			if err == nil {
				ins := sanitize(c.Text)
				if owned && len(ins) == end-start {
					copy(text[start:], ins)
				} else {
					out := make([]byte, 0, len(text)-(end-start)+len(ins))
					out = append(append(append(out, text[:start]...), ins...), text[end:]...)
					text, owned, fresh = out, true, true
				}
				lines.Edit(text, start, end, len(ins))
				edits = append(edits, parse.Change{Before: start, After: len(text) - start - len(ins)})
				continue
			}
		}
		if len(changes) > 1 {
			err = fmt.Errorf("change %d of %d: %w", i+1, len(changes), err)
		}
		return nil, nil, nil, err
	}
	if !fresh {
		text = append([]byte(nil), text...)
	}
	return text, lines, edits, nil
}

// changed returns what differs between two texts as a parse.Change:
// their common prefix, and their common suffix in what is left. A client
// that sends whole texts (no ranges) usually changed a few bytes of
// them, and the comparison costs far less than the parse it spares.
func changed(old, text []byte) parse.Change {
	n := min(len(old), len(text))
	p := commonPrefix(old[:n], text[:n])
	q := 0
	for q < n-p && old[len(old)-1-q] == text[len(text)-1-q] {
		q++
	}
	return parse.Change{Before: p, After: q}
}

// commonPrefix is the length of the longest common prefix of a and b,
// which are as long: compared 256 bytes at a time (memequal), then byte
// by byte.
func commonPrefix(a, b []byte) int {
	const block = 256
	p := 0
	for p+block <= len(a) && string(a[p:p+block]) == string(b[p:p+block]) {
		p += block
	}
	for p < len(a) && a[p] == b[p] {
		p++
	}
	return p
}

// editLog remembers what the last edits of a document changed, by the
// edit count (document.seq) each made, so that a parse of the current
// text can be told what changed since the text its Reuse came from
// (changeSince).
type editLog struct {
	// from is the seq of the oldest edit still in e; an edit before it
	// is forgotten.
	from uint64
	e    []loggedEdit
}

type loggedEdit struct {
	seq uint64
	ch  parse.Change
}

// maxLogged bounds the edits remembered: a parse of a version more than
// that many edits old compares the texts instead (parse.ParseAfter).
const maxLogged = 64

func (l *editLog) add(seq uint64, ch parse.Change) {
	if len(l.e) == maxLogged {
		l.e = append(l.e[:0], l.e[1:]...)
	}
	l.e = append(l.e, loggedEdit{seq, ch})
	l.from = l.e[0].seq
}

// changeSince returns what changed in d's text since its text was at
// edit count seq: nothing before the first byte any edit since touched,
// nothing after the last. It returns nil when an edit since is no longer
// remembered. Called with s.mu held.
func (d *document) changeSince(seq uint64) *parse.Change {
	ch := parse.Change{Before: len(d.text), After: len(d.text)}
	if seq == d.seq {
		return &ch
	}
	if len(d.edits.e) == 0 || seq+1 < d.edits.from {
		return nil
	}
	for _, e := range d.edits.e {
		if e.seq > seq {
			ch.Before = min(ch.Before, e.ch.Before)
			ch.After = min(ch.After, e.ch.After)
		}
	}
	return &ch
}

// changeOffset converts an LSP position to a byte offset of text, the
// client's copy of the document indexed by lines: lines end at LF, CRLF or
// a lone CR (the protocol's three line breaks), columns count in enc, and
// a leading U+FEFF is a character like any other (the client counts it).
// A column past the end of its line means the line's end (the protocol's
// rule); a line past the last one, or a column that splits a character,
// is an error. The position just after a final line break is the end of
// the document. It costs one lookup and a walk of the position's line.
func changeOffset(text []byte, lines *source.Lines, p protocol.Position, enc source.Encoding) (int, error) {
	if int64(p.Line) >= int64(lines.Count()) {
		if int64(p.Line) == int64(lines.Count()) && p.Character == 0 {
			// Some clients (Neovim) address the end of a document that
			// lacks a final line break as the start of the next line.
			return len(text), nil
		}
		return 0, fmt.Errorf("line %d is past the end of the document (%d lines)", p.Line+1, lines.Count())
	}
	off := lines.Start(int(p.Line))
	line := text[off:lines.End(text, int(p.Line))]
	n := enc.Prefix(line, p.Character)
	if n < len(line) && uint32(enc.Count(line[:n])) != p.Character {
		return 0, fmt.Errorf("position %d:%d splits a character (in %s, the position encoding)", p.Line+1, p.Character, enc)
	}
	return off + n, nil
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
	if (d.published || d.prompt) && !s.pullDiagnostics() {
		// Clear what the editor shows; an empty list, never null.
		s.publish(d.uri, d.version, []protocol.Diagnostic{})
	}
	if s.ws.files != nil && strings.HasPrefix(string(d.uri), "file:") && s.inWorkspace(fileName(d.uri)) {
		// A closed workspace prompt is checked from disk again.
		path := fileName(d.uri)
		s.goBackground("check closed file", func() { s.checkFile(path) })
	}
	return nil, nil
}

// docNotOpen is the error for requests about unknown documents.
func docNotOpen(u protocol.DocumentURI) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "document not open: %s", u)
}

// Text synchronisation is incremental: didChange decodes its own change
// events, whose range is a pointer, so full and ranged changes differ.
var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentDidOpen, serve: handle((*server).didOpen),
		advertise: func(c *serverCapabilities) {
			c.TextDocumentSync = textDocumentSync{OpenClose: true, Change: protocol.TextDocumentSyncKindIncremental}
		}},
		feature{method: protocol.MethodTextDocumentDidChange, serve: handle((*server).didChange)},
		feature{method: protocol.MethodTextDocumentDidClose, serve: handle((*server).didClose)},
		feature{method: protocol.MethodTextDocumentDidSave, serve: handle((*server).didSave)}}
})
