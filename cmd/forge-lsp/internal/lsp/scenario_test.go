package lsp

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
	"golang.org/x/tools/txtar"
)

// Scenario tests (gopls-style marker tests). Each testdata/lsp/*.txtar
// holds files and, in its comment section, one annotation per line:
//
//	@diag(file, "pattern", "code")           a diagnostic with that code on the line of pattern
//	@nodiag(file)                            no publishDiagnostics at all for file
//	@hover(file, "pat|tern", "substring"...) hover at | contains each substring
//	@complete(file, "pat|", "label"...)      completion at | offers each label
//	@nocomplete(file, "pat|", "label"...)    ... and not these
//	@signature(file, "pat|", "label", n, "doc"...) signature help shows label with parameter n
//	                                         active, the active parameter's text and each doc substring
//	@nosignature(file, "pat|")               no signature help
//	@def(file, "pat|", "target pattern")     definition is the start of target pattern
//	@refs(file, "pat|", n)                   n references (declaration included)
//	@lenses(file, n)                         n code lenses
//	@symbols(file, "name"...)                document symbols include these names (any depth)
//	@folds(file, n)                          at least n folding ranges
//	@quickfix(file, "pattern", "title", "text after") applying the fix yields text containing "text after"
//	@rename(file, "pat|", "New", "text after"...)      renaming yields text containing each
//	@run(file, "## Section" or "", "input", "result substring")  run via forge.runSection/runPrompt
//
// A pattern's cursor is at '|' (removed before matching) or at its start.
// Every diagnostic of a prompt must be matched by a @diag (and vice versa).
// A "gateway" file scripts model replies for @run (one per line: "text: ..."
// or "call: name {json}"); the test records a cassette against a real HTTP
// gateway, stops the gateway, and the server runs offline from the cassette.

type annotation struct {
	name string
	args []string
	line int
}

func parseAnnotations(t *testing.T, comment string) []annotation {
	var out []annotation
	for i, line := range strings.Split(comment, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "@") {
			continue
		}
		open := strings.IndexByte(line, '(')
		if open < 0 || !strings.HasSuffix(line, ")") {
			t.Fatalf("line %d: malformed annotation %q", i+1, line)
		}
		a := annotation{name: line[1:open], line: i + 1}
		rest := strings.TrimSpace(line[open+1 : len(line)-1])
		for rest != "" {
			var arg string
			if rest[0] == '"' {
				q, err := strconv.QuotedPrefix(rest)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				arg, _ = strconv.Unquote(q)
				rest = rest[len(q):]
			} else {
				end := strings.IndexByte(rest, ',')
				if end < 0 {
					end = len(rest)
				}
				arg = strings.TrimSpace(rest[:end])
				rest = rest[end:]
			}
			a.args = append(a.args, arg)
			rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
			rest = strings.TrimPrefix(rest, ",")
			rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		}
		out = append(out, a)
	}
	return out
}

type scenario struct {
	t     *testing.T
	c     *testClient
	dir   string
	files map[string]string
	// srv is the server under test (marker tests read its documents);
	// golden holds txtar files that are not opened (want/... texts).
	srv    *server
	golden map[string]string
	// version is each open document's last version sent.
	version map[string]int32
	// enc is the position encoding the client negotiated: every position
	// the scenario sends or checks counts in it.
	enc source.Encoding
}

// lspFile is text as the client holds it, with positions in sc.enc.
func (sc *scenario) lspFile(text string) *source.File {
	f := source.NewFile("x", []byte(text))
	f.UseLSPEncoding(sc.enc, true)
	return f
}

// fromUTF16 converts a position written in UTF-16 code units (the raw
// coordinates of @editat and @badedit) to sc.enc over text. A column that
// splits a surrogate pair becomes one inside the character's UTF-8 bytes,
// which is as invalid; a position past the end stays as written.
func (sc *scenario) fromUTF16(text string, p protocol.Position) protocol.Position {
	if sc.enc == source.UTF16 {
		return p
	}
	f := source.NewFile("x", []byte(text))
	f.UseLSPEncoding(source.UTF16, true)
	if int(p.Line) >= f.LineCount() {
		return p
	}
	off := f.LSPOffset(p.Line, p.Character) // rounds down to a character start
	_, at := f.LSPPosition(off)
	if off == f.LineEnd(int(p.Line)+1) && at < p.Character {
		return p // past the end of the line: past it in any encoding
	}
	l, c := sc.lspFile(text).LSPPosition(off)
	if at < p.Character {
		c++ // inside the character at off: inside it in sc.enc too
	}
	return protocol.Position{Line: l, Character: c}
}

func (sc *scenario) uri(name string) string {
	return "file://" + filepath.ToSlash(filepath.Join(sc.dir, name))
}

// locate returns the LSP position of a pattern's cursor in file.
func (sc *scenario) locate(a annotation, file, pattern string) protocol.Position {
	sc.t.Helper()
	text, ok := sc.files[file]
	if !ok {
		sc.t.Fatalf("annotation line %d: no file %s", a.line, file)
	}
	cursor := strings.IndexByte(pattern, '|')
	plain := strings.Replace(pattern, "|", "", 1)
	if cursor < 0 {
		cursor = 0
	}
	i := strings.Index(text, plain)
	if i < 0 {
		sc.t.Fatalf("annotation line %d: pattern %q not in %s", a.line, plain, file)
	}
	f := sc.lspFile(text)
	l, ch := f.LSPPosition(i + cursor)
	return protocol.Position{Line: l, Character: ch}
}

func (sc *scenario) docPos(a annotation) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": sc.uri(a.args[0])}, "position": sc.locate(a, a.args[0], a.args[1])}
}

func TestScenarios(t *testing.T) {
	runScenarioFiles(t, "../../../../testdata/lsp/*.txtar", source.UTF16)
}

// runScenarioFiles runs each txtar scenario matching pattern as a
// subtest, the client negotiating enc; matching none fails.
func runScenarioFiles(t *testing.T, pattern string, enc source.Encoding) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios match %s: %v", pattern, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			runScenario(t, ar, enc)
		})
	}
}

func runScenario(t *testing.T, ar *txtar.Archive, enc source.Encoding) {
	dir := t.TempDir()
	sc := &scenario{t: t, dir: dir, files: map[string]string{}, golden: map[string]string{}, version: map[string]int32{}, enc: enc}
	var gatewayScript, modelsFile string
	for _, f := range ar.Files {
		if f.Name == "gateway" {
			gatewayScript = string(f.Data)
			continue
		}
		if f.Name == "models" {
			modelsFile = string(f.Data)
			continue
		}
		if strings.HasPrefix(f.Name, "want/") {
			sc.golden[f.Name] = string(f.Data)
			continue
		}
		sc.files[f.Name] = string(f.Data)
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	anns := parseAnnotations(t, string(ar.Comment))

	// Runs need a cassette: record it now against a scripted gateway.
	initOpts := map[string]any{}
	for _, a := range anns {
		if a.name == "run" {
			cassette := filepath.Join(dir, "run.cassette")
			recordCassette(t, sc, a, gatewayScript, cassette)
			initOpts["cassette"] = cassette
			break
		}
	}

	opts := options{Debounce: 20 * time.Millisecond}
	if modelsFile != "" {
		// A "models" file is the catalog of a real HTTP gateway, one model
		// a line: id context description.
		srv := gatewaytest.New(t, "test-key")
		for _, line := range strings.Split(strings.TrimSpace(modelsFile), "\n") {
			f := strings.SplitN(line, " ", 3)
			if len(f) != 3 {
				t.Fatalf("models: bad line %q", line)
			}
			n, _ := strconv.Atoi(f[1])
			srv.Catalog = append(srv.Catalog, gateway.Model{ID: f[0], Context: uint32(n), Description: f[2], Thinking: "never", ToolDialect: "openai"})
		}
		initOpts["gatewayUrl"] = srv.BaseURL()
		opts.Getenv = func(k string) string {
			if k == envAPIKey {
				return "test-key"
			}
			return ""
		}
	}
	testHookServer = func(s *server) { sc.srv = s }
	sc.c = startServer(t, opts)
	sc.c.root = dir
	if _, pull := sc.golden["want/pull"]; pull {
		sc.c.textDocumentCaps = map[string]any{"diagnostic": map[string]any{}}
	}
	if enc != source.UTF16 {
		sc.c.positionEncodings = []string{enc.String(), "utf-16"}
	}
	sc.c.initialize(map[string]any{"forge": initOpts})
	testHookServer = nil // initialize's reply means Serve has called it
	if got := sc.srv.client.encoding; got != enc {
		t.Fatalf("the server negotiated %s, want %s", got, enc)
	}
	names := make([]string, 0, len(sc.files))
	for name := range sc.files {
		// Files under closed/ stay on disk: the workspace features find them.
		if strings.HasSuffix(name, ".md") && !strings.HasPrefix(name, "closed/") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		sc.c.open(sc.uri(name), sc.files[name])
		sc.version[name] = 1
	}
	if _, pull := sc.golden["want/pull"]; !pull {
		checkDiagnostics(sc, anns, names)
	}
	for _, a := range anns {
		switch a.name {
		case "diag", "nodiag":
		case "hover":
			var h *protocol.Hover
			sc.c.mustCall(protocol.MethodTextDocumentHover, sc.docPos(a), &h)
			if h == nil {
				t.Errorf("line %d: @hover%v: no hover", a.line, a.args)
				continue
			}
			for _, want := range a.args[2:] {
				if !strings.Contains(h.Contents.Value, want) {
					t.Errorf("line %d: hover %q lacks %q", a.line, h.Contents.Value, want)
				}
			}
		case "complete", "nocomplete":
			var list protocol.CompletionList
			sc.c.mustCall(protocol.MethodTextDocumentCompletion, sc.docPos(a), &list)
			got := map[string]bool{}
			for _, it := range list.Items {
				got[it.Label] = true
			}
			for _, want := range a.args[2:] {
				if got[want] != (a.name == "complete") {
					t.Errorf("line %d: @%s: label %q present=%v; items: %v", a.line, a.name, want, got[want], slices.Sorted(maps.Keys(got)))
				}
			}
		case "signature", "nosignature":
			var h *signatureHelp
			sc.c.mustCall(protocol.MethodTextDocumentSignatureHelp, sc.docPos(a), &h)
			if a.name == "nosignature" {
				if h != nil {
					t.Errorf("line %d: @nosignature: got %+v", a.line, h)
				}
				continue
			}
			if h == nil || len(h.Signatures) != 1 {
				t.Errorf("line %d: @signature%v: got %+v", a.line, a.args, h)
				continue
			}
			sig := h.Signatures[0]
			n, _ := strconv.Atoi(a.args[3])
			if sig.Label != a.args[2] || h.ActiveParameter != uint32(n) || sig.ActiveParameter != uint32(n) {
				t.Errorf("line %d: signature %q active %d, want %q active %d", a.line, sig.Label, h.ActiveParameter, a.args[2], n)
				continue
			}
			if n < len(sig.Parameters) {
				// Labels are UTF-16 offsets; API signatures are ASCII.
				l := sig.Parameters[n].Label
				if l[0] > l[1] || int(l[1]) > len(sig.Label) {
					t.Errorf("line %d: parameter label %v out of %q", a.line, l, sig.Label)
				}
			}
			for _, want := range a.args[4:] {
				if !strings.Contains(sig.Documentation.Value, want) {
					t.Errorf("line %d: signature doc %q lacks %q", a.line, sig.Documentation.Value, want)
				}
			}
		case "def":
			var locs []protocol.Location
			sc.c.mustCall(protocol.MethodTextDocumentDefinition, sc.docPos(a), &locs)
			want := sc.locate(a, a.args[0], a.args[2])
			if len(locs) != 1 || locs[0].Range.Start != want {
				t.Errorf("line %d: definition = %+v, want start %+v", a.line, locs, want)
			}
		case "refs":
			params := sc.docPos(a)
			params["context"] = map[string]any{"includeDeclaration": true}
			var locs []protocol.Location
			sc.c.mustCall(protocol.MethodTextDocumentReferences, params, &locs)
			if n, _ := strconv.Atoi(a.args[2]); len(locs) != n {
				t.Errorf("line %d: %d references, want %s: %+v", a.line, len(locs), a.args[2], locs)
			}
		case "lenses":
			var lenses []protocol.CodeLens
			sc.c.mustCall(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": sc.uri(a.args[0])}}, &lenses)
			if n, _ := strconv.Atoi(a.args[1]); len(lenses) != n {
				t.Errorf("line %d: %d code lenses, want %s", a.line, len(lenses), a.args[1])
			}
			for _, l := range lenses {
				if l.Command == nil || (l.Command.Command != commandRunSection && l.Command.Command != commandRunPrompt) {
					t.Errorf("line %d: lens without a run command: %+v", a.line, l)
				}
			}
		case "symbols":
			var syms []protocol.DocumentSymbol
			sc.c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": sc.uri(a.args[0])}}, &syms)
			got := map[string]bool{}
			var walk func([]protocol.DocumentSymbol)
			walk = func(ss []protocol.DocumentSymbol) {
				for _, s := range ss {
					got[s.Name] = true
					walk(s.Children)
				}
			}
			walk(syms)
			for _, want := range a.args[1:] {
				if !got[want] {
					t.Errorf("line %d: no symbol %q in %v", a.line, want, slices.Sorted(maps.Keys(got)))
				}
			}
		case "folds":
			var folds []protocol.FoldingRange
			sc.c.mustCall(protocol.MethodTextDocumentFoldingRange, map[string]any{"textDocument": map[string]any{"uri": sc.uri(a.args[0])}}, &folds)
			if n, _ := strconv.Atoi(a.args[1]); len(folds) < n {
				t.Errorf("line %d: %d folding ranges, want at least %d", a.line, len(folds), n)
			}
		case "quickfix":
			pos := sc.locate(a, a.args[0], a.args[1])
			var actions []protocol.CodeAction
			sc.c.mustCall(protocol.MethodTextDocumentCodeAction, map[string]any{
				"textDocument": map[string]any{"uri": sc.uri(a.args[0])},
				"range":        protocol.Range{Start: pos, End: pos},
				"context":      map[string]any{"diagnostics": []any{}},
			}, &actions)
			var found *protocol.CodeAction
			for i := range actions {
				if strings.Contains(actions[i].Title, a.args[2]) {
					found = &actions[i]
				}
			}
			if found == nil || found.Edit == nil {
				t.Errorf("line %d: no quick fix titled %q among %+v", a.line, a.args[2], actions)
				continue
			}
			after := applyEdits(sc, sc.files[a.args[0]], found.Edit.Changes[protocol.DocumentURI(sc.uri(a.args[0]))])
			if !strings.Contains(after, a.args[3]) {
				t.Errorf("line %d: after the fix the text lacks %q:\n%s", a.line, a.args[3], after)
			}
		case "rename":
			params := sc.docPos(a)
			params["newName"] = a.args[2]
			var we protocol.WorkspaceEdit
			sc.c.mustCall(protocol.MethodTextDocumentRename, params, &we)
			after := applyEdits(sc, sc.files[a.args[0]], we.Changes[protocol.DocumentURI(sc.uri(a.args[0]))])
			for _, want := range a.args[3:] {
				if !strings.Contains(after, want) {
					t.Errorf("line %d: after rename the text lacks %q:\n%s", a.line, want, after)
				}
			}
			// The renamed prompt must still parse without errors.
			if p := parse.Parse("x.md", []byte(after)); len(p.Errors) > 0 {
				t.Errorf("line %d: renamed prompt has parse errors: %v", a.line, p.Errors[0].Message)
			}
		case "run":
			checkRun(sc, a)
		default:
			h, ok := markers[a.name]
			if !ok {
				t.Fatalf("line %d: unknown annotation @%s", a.line, a.name)
			}
			h(sc, a)
		}
	}
	sc.c.shutdown()
}

// checkDiagnostics matches the first publish of every opened document
// against @diag/@nodiag, both ways.
func checkDiagnostics(sc *scenario, anns []annotation, names []string) {
	t := sc.t
	for _, name := range names {
		var want []annotation
		nodiag := false
		for _, a := range anns {
			if a.name == "diag" && a.args[0] == name {
				want = append(want, a)
			}
			if a.name == "nodiag" && a.args[0] == name {
				nodiag = true
			}
		}
		if nodiag {
			// A non-prompt document: after a later document's publish has
			// arrived, none may have come for this one.
			continue
		}
		p, _ := sc.c.diagnosticsFor(sc.uri(name), 1, 0)
		if p.Diagnostics == nil {
			t.Errorf("%s: diagnostics sent as null", name)
		}
		// Budget warnings depend on when the model catalog arrives; the
		// marker tests wait for them with @waitdiag.
		kept := p.Diagnostics[:0:0]
		for _, d := range p.Diagnostics {
			if d.Code != "context-budget" {
				kept = append(kept, d)
			}
		}
		p.Diagnostics = kept
		used := make([]bool, len(p.Diagnostics))
		for _, a := range want {
			pos := sc.locate(a, name, a.args[1])
			ok := false
			for i, d := range p.Diagnostics {
				if !used[i] && d.Range.Start.Line == pos.Line && fmt.Sprint(d.Code) == a.args[2] {
					used[i], ok = true, true
					break
				}
			}
			if !ok {
				t.Errorf("line %d: no %s diagnostic on line %d of %s; got %s", a.line, a.args[2], pos.Line+1, name, mustJSON(p.Diagnostics))
			}
		}
		for i, d := range p.Diagnostics {
			if !used[i] {
				t.Errorf("%s: unexpected diagnostic line %d [%v] %s", name, d.Range.Start.Line+1, d.Code, d.Message)
			}
		}
	}
	for _, a := range anns {
		if a.name != "nodiag" {
			continue
		}
		ns, _ := sc.c.snapshot()
		for _, n := range ns {
			var p publishParams
			if n.method == protocol.MethodTextDocumentPublishDiagnostics && json.Unmarshal(n.params, &p) == nil && string(p.URI) == sc.uri(a.args[0]) {
				t.Errorf("line %d: %s is not a prompt but got diagnostics %s", a.line, a.args[0], mustJSON(p.Diagnostics))
			}
		}
	}
}

// applyEdits applies LSP edits (non-overlapping) to text.
func applyEdits(sc *scenario, text string, edits []protocol.TextEdit) string {
	f := sc.lspFile(text)
	type e struct {
		a, b int
		s    string
	}
	var es []e
	for _, ed := range edits {
		es = append(es, e{f.LSPOffset(ed.Range.Start.Line, ed.Range.Start.Character), f.LSPOffset(ed.Range.End.Line, ed.Range.End.Character), ed.NewText})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].a > es[j].a })
	out := text
	for _, x := range es {
		out = out[:x.a] + x.s + out[x.b:]
	}
	return out
}

// recordCassette runs the prompt once with the engine against a scripted
// HTTP gateway, recording a cassette, then stops the gateway so that the
// server's run can only succeed offline.
func recordCassette(t *testing.T, sc *scenario, a annotation, script, path string) {
	srv := gatewaytest.New(t, "test-key")
	srv.Catalog = []gateway.Model{{ID: "test-model", Description: "A model suited for careful analysis, coding, and general assistance", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "text:"):
			srv.Enqueue(gatewaytest.Text(strings.TrimSpace(strings.TrimPrefix(line, "text:"))))
		case strings.HasPrefix(line, "call:"):
			name, args, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "call:")), " ")
			srv.Enqueue(gatewaytest.Calls(name, args))
		}
	}
	client, err := gateway.NewRecording(srv.Config(), path)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sc.dir, a.args[0])
	p := parse.Parse(file, []byte(sc.files[a.args[0]]))
	cfg := run.Config{Input: a.args[2], Models: run.ModelConfig{Client: client}}
	if a.args[1] != "" {
		sec, err := parse.FindSection(p, a.args[1])
		if err != nil {
			t.Fatal(err)
		}
		_, err = run.RunSection(t.Context(), p, sec, cfg)
		if err != nil {
			t.Fatalf("recording run: %v", err)
		}
	} else if _, err := run.Run(t.Context(), p, cfg); err != nil {
		t.Fatalf("recording run: %v", err)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Close()
}

func checkRun(sc *scenario, a annotation) {
	t, c := sc.t, sc.c
	from, _ := c.snapshot()
	cmd := commandRunPrompt
	args := map[string]any{"uri": sc.uri(a.args[0]), "input": a.args[2]}
	if a.args[1] != "" {
		cmd = commandRunSection
		args["section"] = a.args[1]
	}
	var res runResult
	if err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": cmd, "arguments": []any{args}}, &res); err != nil {
		t.Fatalf("line %d: %s: %v", a.line, cmd, err)
	}
	if !strings.Contains(res.Result, a.args[3]) {
		t.Errorf("line %d: run result %q lacks %q", a.line, res.Result, a.args[3])
	}
	// The showMessage with the result is the last thing the run sends
	// before replying, so every progress notification has arrived.
	if _, _, ok := c.waitFor(len(from), 30*time.Second, func(n note) bool {
		return n.method == protocol.MethodWindowShowMessage && strings.Contains(string(n.params), a.args[3])
	}); !ok {
		t.Errorf("line %d: no window/showMessage with the result", a.line)
	}
	ns, _ := c.snapshot()
	var kinds []string
	var messages []string
	transcript := ""
	for _, n := range ns[len(from):] {
		switch n.method {
		case protocol.MethodProgress:
			var p struct {
				Value struct {
					Kind, Message string
				}
			}
			_ = json.Unmarshal(n.params, &p)
			kinds = append(kinds, p.Value.Kind)
			messages = append(messages, p.Value.Message)
		case protocol.MethodWindowLogMessage:
			transcript += string(n.params)
		}
	}
	if len(kinds) < 3 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" {
		t.Errorf("line %d: progress kinds %v, want begin, reports, end", a.line, kinds)
	}
	joined := strings.Join(messages, "\n")
	t.Logf("progress %v %q\ntranscript %s", kinds, messages, transcript)
	for _, want := range []string{"section", "model round"} {
		if !strings.Contains(joined, want) {
			t.Errorf("line %d: no progress report mentioning %q: %v", a.line, want, messages)
		}
	}
	if !strings.Contains(transcript, "model round 1") {
		t.Errorf("line %d: transcript lacks the model round: %s", a.line, transcript)
	}
	for _, want := range a.args[4:] {
		if !strings.Contains(transcript+joined, want) {
			t.Errorf("line %d: transcript/progress lacks %q", a.line, want)
		}
	}
}
