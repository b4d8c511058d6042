package lsp

import (
	"sort"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
	"golang.org/x/tools/txtar"
)

// TestFormattingCRLF runs the formatting marker file with its prompt's
// line breaks CRLF, in both position encodings: every edit keeps CRLF and
// gives the same lines as on the LF text.
func TestFormattingCRLF(t *testing.T) {
	ar, err := txtar.ParseFile("../../../../testdata/lsp/markers/formatting.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var anns []string
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if strings.HasPrefix(line, "@") && strings.Contains(line, "(p.md,") {
			anns = append(anns, line)
		}
	}
	if len(anns) < 3 {
		t.Fatalf("formatting.txtar has %d annotations on p.md", len(anns))
	}
	ar.Comment = []byte("@crlf(p.md)\n" + strings.Join(anns, "\n") + "\n")
	files := ar.Files[:0]
	for _, f := range ar.Files {
		if !strings.HasSuffix(f.Name, ".md") || f.Name == "p.md" || strings.HasPrefix(f.Name, "want/") {
			files = append(files, f)
		}
	}
	ar.Files = files
	for _, enc := range []source.Encoding{source.UTF16, source.UTF8} {
		t.Run(enc.String(), func(t *testing.T) { runScenario(t, ar, enc) })
	}
}

// @format(file, "want/name")                          textDocument/formatting: the edits applied to
//
//	the client's text give want/name; the result is sent as a change, and
//	formatting it again gives no edit
//
// @rangeformat(file, "from|", "to|", "want/name")     textDocument/rangeFormatting over the range
//
//	from the first pattern's cursor to the second's: the edits give want/name
//
// @crlf(file)                                          the client's text of file with CRLF line breaks,
//
//	sent as a full change; from then on the want texts of @format and
//	@rangeformat on file are compared with their lines ended by CRLF
func init() {
	markers["format"] = markerFormat
	markers["rangeformat"] = markerFormat
	markers["crlf"] = markerCRLF
}

func markerCRLF(sc *scenario, a annotation) {
	sc.need(a, 1)
	file := a.args[0]
	text := strings.ReplaceAll(strings.ReplaceAll(sc.files[file], "\r\n", "\n"), "\n", "\r\n")
	sc.files[file] = text
	sc.sendChanges(file, []any{map[string]any{"text": text}})
}

func markerFormat(sc *scenario, a annotation) {
	file := a.args[0]
	params := map[string]any{"textDocument": map[string]any{"uri": sc.uri(file)}, "options": map[string]any{"tabSize": 4, "insertSpaces": false}}
	method, wantName := protocol.MethodTextDocumentFormatting, ""
	if a.name == "rangeformat" {
		sc.need(a, 4)
		params["range"] = protocol.Range{Start: sc.locate(a, file, a.args[1]), End: sc.locate(a, file, a.args[2])}
		method, wantName = protocol.MethodTextDocumentRangeFormatting, a.args[3]
	} else {
		sc.need(a, 2)
		wantName = a.args[1]
	}
	want, ok := sc.golden[wantName]
	if !ok {
		sc.t.Fatalf("line %d: no txtar file %s", a.line, wantName)
	}
	if strings.Contains(sc.files[file], "\r\n") {
		want = strings.ReplaceAll(want, "\n", "\r\n")
	}
	var edits []protocol.TextEdit
	sc.c.mustCall(method, params, &edits)
	got := sc.applyEdits(file, edits)
	if got != want {
		sc.t.Errorf("line %d: @%s of %s gives\n%s\nwant\n%s", a.line, a.name, file, got, want)
		return
	}
	sc.files[file] = got
	sc.sendChanges(file, []any{map[string]any{"text": got}})
	if a.name == "format" {
		var again []protocol.TextEdit
		sc.c.mustCall(method, params, &again)
		if len(again) != 0 {
			sc.t.Errorf("line %d: formatting the formatted text gives edits %v", a.line, again)
		}
	}
}

// applyEdits applies LSP edits (positions in the negotiated encoding) to
// the client's text of file.
func (sc *scenario) applyEdits(file string, edits []protocol.TextEdit) string {
	text := sc.files[file]
	f := sc.lspFile(text)
	type span struct {
		a, b int
		s    string
	}
	var ss []span
	for _, e := range edits {
		ss = append(ss, span{f.LSPOffset(e.Range.Start.Line, e.Range.Start.Character), f.LSPOffset(e.Range.End.Line, e.Range.End.Character), e.NewText})
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].a > ss[j].a })
	for _, s := range ss {
		text = text[:s.a] + s.s + text[s.b:]
	}
	return text
}
