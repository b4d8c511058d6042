package lsp

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// Marker tests: testdata/lsp/markers/<feature>.txtar, one file per LSP
// feature, run by the scenario runner (scenario_test.go) against the real
// server over an in-memory pipe. Besides the scenario annotations they
// understand:
//
//	@edit(file, "pattern", "replacement", ...)  one didChange with a ranged change per pair,
//	                                            each pattern found in the text as the changes before it left it
//	@editat(file, l1, c1, l2, c2, "text")       one ranged change at raw LSP coordinates (0-based, UTF-16)
//	@full(file, "text")                         one full-text change
//	@badedit(file, l1, c1, l2, c2, "text")      a change that must be refused: an error message, text and version unchanged
//	@text(file, "want/name")                    the server's text of file equals the txtar file want/name
//	@diags(file, "code"...)                     the diagnostics of the current version have exactly these codes
//
// and the feature annotations registered by the other *marker_test.go
// files into markers.

// markers maps an annotation name to its check.
var markers = map[string]func(sc *scenario, a annotation){}

func init() {
	markers["edit"] = markerEdit
	markers["editat"] = markerEditAt
	markers["full"] = markerFull
	markers["badedit"] = markerBadEdit
	markers["text"] = markerText
	markers["diags"] = markerDiags
}

// TestMarkers runs every marker file twice: as a client that counts
// columns in UTF-16 (the protocol's default) and as one that negotiates
// UTF-8 (LSP 3.17 general.positionEncodings). Patterns are located in the
// negotiated encoding, and raw UTF-16 coordinates are converted to it.
func TestMarkers(t *testing.T) {
	for _, enc := range []source.Encoding{source.UTF16, source.UTF8} {
		t.Run(enc.String(), func(t *testing.T) {
			runScenarioFiles(t, "../../../../testdata/lsp/markers/*.txtar", enc)
		})
	}
}

// args returns a's arguments from i on, failing the test when there are
// fewer than n.
func (sc *scenario) need(a annotation, n int) {
	sc.t.Helper()
	if len(a.args) < n {
		sc.t.Fatalf("line %d: @%s needs at least %d arguments, has %d", a.line, a.name, n, len(a.args))
	}
}

func (sc *scenario) atoi(a annotation, s string) uint32 {
	sc.t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		sc.t.Fatalf("line %d: %q is not a count", a.line, s)
	}
	return uint32(n)
}

// sendChanges sends one didChange for file with the next version.
func (sc *scenario) sendChanges(file string, changes []any) int32 {
	sc.version[file]++
	v := sc.version[file]
	sc.c.notify(protocol.MethodTextDocumentDidChange, map[string]any{
		"textDocument":   map[string]any{"uri": sc.uri(file), "version": v},
		"contentChanges": changes,
	})
	return v
}

func markerEdit(sc *scenario, a annotation) {
	sc.need(a, 3)
	file := a.args[0]
	text := sc.files[file]
	var changes []any
	for i := 1; i+1 < len(a.args); i += 2 {
		pat, repl := a.args[i], a.args[i+1]
		at := strings.Index(text, pat)
		if at < 0 {
			sc.t.Fatalf("line %d: pattern %q not in the current text of %s", a.line, pat, file)
		}
		f := sc.lspFile(text)
		changes = append(changes, map[string]any{"range": lspRange(f, source.Span{Start: at, End: at + len(pat)}), "text": repl})
		text = text[:at] + repl + text[at+len(pat):]
	}
	sc.files[file] = text
	sc.sendChanges(file, changes)
}

func markerEditAt(sc *scenario, a annotation) {
	sc.need(a, 6)
	file := a.args[0]
	r := protocol.Range{
		Start: protocol.Position{Line: sc.atoi(a, a.args[1]), Character: sc.atoi(a, a.args[2])},
		End:   protocol.Position{Line: sc.atoi(a, a.args[3]), Character: sc.atoi(a, a.args[4])},
	}
	text := sc.files[file]
	r.Start, r.End = sc.fromUTF16(text, r.Start), sc.fromUTF16(text, r.End)
	f := sc.lspFile(text)
	start, end := offsetOf(f, r.Start), offsetOf(f, r.End)
	sc.files[file] = sc.files[file][:start] + a.args[5] + sc.files[file][end:]
	sc.sendChanges(file, []any{map[string]any{"range": r, "text": a.args[5]}})
}

func markerFull(sc *scenario, a annotation) {
	sc.need(a, 2)
	sc.files[a.args[0]] = a.args[1]
	sc.sendChanges(a.args[0], []any{map[string]any{"text": a.args[1]}})
}

func markerBadEdit(sc *scenario, a annotation) {
	sc.need(a, 6)
	file := a.args[0]
	from, _ := sc.c.snapshot()
	r := protocol.Range{
		Start: protocol.Position{Line: sc.atoi(a, a.args[1]), Character: sc.atoi(a, a.args[2])},
		End:   protocol.Position{Line: sc.atoi(a, a.args[3]), Character: sc.atoi(a, a.args[4])},
	}
	r.Start, r.End = sc.fromUTF16(sc.files[file], r.Start), sc.fromUTF16(sc.files[file], r.End)
	// The server must keep its version: the test's count does not move.
	sc.c.notify(protocol.MethodTextDocumentDidChange, map[string]any{
		"textDocument":   map[string]any{"uri": sc.uri(file), "version": sc.version[file] + 1},
		"contentChanges": []any{map[string]any{"range": r, "text": a.args[5]}},
	})
	if _, _, ok := sc.c.waitFor(len(from), 30*time.Second, func(n note) bool {
		return n.method == protocol.MethodWindowShowMessage && strings.Contains(string(n.params), "not applied")
	}); !ok {
		sc.t.Errorf("line %d: out-of-range change got no error message", a.line)
	}
	text, version := sc.serverText(file)
	if text != sc.files[file] || version != sc.version[file] {
		sc.t.Errorf("line %d: after a refused change the server has version %d (want %d) and text\n%s\nwant\n%s", a.line, version, sc.version[file], text, sc.files[file])
	}
}

// serverText returns the server's text and version of file once every
// message sent before has been handled (a request round trip orders it).
func (sc *scenario) serverText(file string) (string, int32) {
	sc.t.Helper()
	var ignored json.RawMessage
	_ = sc.c.call(protocol.MethodTextDocumentFoldingRange, map[string]any{"textDocument": map[string]any{"uri": sc.uri(file)}}, &ignored)
	sc.srv.mu.Lock()
	defer sc.srv.mu.Unlock()
	d := sc.srv.docs[uriKey(protocol.DocumentURI(sc.uri(file)))]
	if d == nil {
		sc.t.Fatalf("%s is not open on the server", file)
	}
	return string(d.text), d.version
}

func markerText(sc *scenario, a annotation) {
	sc.need(a, 2)
	want, ok := sc.golden[a.args[1]]
	if !ok {
		sc.t.Fatalf("line %d: no txtar file %s", a.line, a.args[1])
	}
	got, _ := sc.serverText(a.args[0])
	if got != want {
		sc.t.Errorf("line %d: server text of %s:\n%q\nwant\n%q", a.line, a.args[0], got, want)
	}
	if sc.files[a.args[0]] != want {
		sc.t.Errorf("line %d: the test's own text of %s differs from %s:\n%q", a.line, a.args[0], a.args[1], sc.files[a.args[0]])
	}
}

func markerDiags(sc *scenario, a annotation) {
	sc.need(a, 1)
	file := a.args[0]
	p, _ := sc.c.diagnosticsFor(sc.uri(file), sc.version[file], 0)
	var got []string
	for _, d := range p.Diagnostics {
		got = append(got, toString(d.Code))
	}
	if strings.Join(got, ",") != strings.Join(a.args[1:], ",") {
		sc.t.Errorf("line %d: diagnostics of %s version %d have codes %v, want %v: %s", a.line, file, sc.version[file], got, a.args[1:], mustJSON(p.Diagnostics))
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
