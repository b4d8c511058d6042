package lsp

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.lsp.dev/protocol"
)

// Workspace markers. Files under closed/ are written to the workspace
// folder but never opened; a txtar file named want/pull makes the client
// declare pull diagnostics.
//
//	@wsymbol("query", "name"...)         workspace/symbol for the query finds these names (waits for the scan)
//	@pulldiag(file, "code"...)           textDocument/diagnostic for file has exactly these codes
//	@wsdiag(file, "code"...)             workspace/diagnostic reports file with exactly these codes
//	@pushdiag(file, "code"...)           a publishDiagnostics for file (open or not) arrives with exactly these codes
//	@write(file, "text")                 writes file on disk and sends didChangeWatchedFiles (created or changed)
//	@remove(file)                        deletes file and sends didChangeWatchedFiles (deleted)
//	@requested("method")                 the server has sent the client a request of this method
func init() {
	markers["requested"] = markerRequested
	markers["wsymbol"] = markerWorkspaceSymbol
	markers["pulldiag"] = markerPullDiag
	markers["wsdiag"] = markerWorkspaceDiag
	markers["pushdiag"] = markerPushDiag
	markers["write"] = markerWrite
	markers["remove"] = markerRemove
}

// eventually retries check until it returns "" or 10 s pass, and reports
// the last failure.
func (sc *scenario) eventually(a annotation, check func() string) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			sc.t.Errorf("line %d: @%s%q: %s", a.line, a.name, a.args, msg)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func codesOf(ds []protocol.Diagnostic) string {
	var cs []string
	for _, d := range ds {
		cs = append(cs, toString(d.Code))
	}
	sort.Strings(cs)
	return strings.Join(cs, ",")
}

func wantCodes(args []string) string {
	cs := append([]string(nil), args...)
	sort.Strings(cs)
	return strings.Join(cs, ",")
}

func markerWorkspaceSymbol(sc *scenario, a annotation) {
	sc.need(a, 1)
	sc.eventually(a, func() string {
		var syms []protocol.SymbolInformation
		sc.c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": a.args[0]}, &syms)
		got := map[string]bool{}
		for _, s := range syms {
			got[s.Name+" "+filepath.Base(string(s.Location.URI))] = true
			got[s.Name] = true
		}
		for _, w := range a.args[1:] {
			if !got[w] {
				return "missing " + w + " among " + mustJSON(slices.Sorted(maps.Keys(got)))
			}
		}
		return ""
	})
}

func markerPullDiag(sc *scenario, a annotation) {
	sc.need(a, 1)
	sc.eventually(a, func() string {
		var rep documentDiagnosticReport
		sc.c.mustCall(methodDocumentDiagnostic, map[string]any{"textDocument": map[string]any{"uri": sc.uri(a.args[0])}}, &rep)
		if rep.Kind != "full" || rep.Items == nil {
			return "report " + mustJSON(rep)
		}
		if got := codesOf(rep.Items); got != wantCodes(a.args[1:]) {
			return "codes " + got
		}
		return ""
	})
}

func markerWorkspaceDiag(sc *scenario, a annotation) {
	sc.need(a, 1)
	sc.eventually(a, func() string {
		var res struct {
			Items []workspaceDocumentReport `json:"items"`
		}
		sc.c.mustCall(methodWorkspaceDiagnostic, map[string]any{"previousResultIds": []any{}}, &res)
		for _, it := range res.Items {
			if string(it.URI) == sc.uri(a.args[0]) {
				if got := codesOf(it.Items); got != wantCodes(a.args[1:]) {
					return "codes " + got
				}
				return ""
			}
		}
		return "no report for the file in " + mustJSON(res.Items)
	})
}

func markerPushDiag(sc *scenario, a annotation) {
	sc.need(a, 1)
	uri := sc.uri(a.args[0])
	want := wantCodes(a.args[1:])
	var last string
	_, _, ok := sc.c.waitFor(0, 30*time.Second, func(n note) bool {
		var p publishParams
		if n.method != protocol.MethodTextDocumentPublishDiagnostics || json.Unmarshal(n.params, &p) != nil || string(p.URI) != uri {
			return false
		}
		last = codesOf(p.Diagnostics)
		return last == want
	})
	if !ok {
		sc.t.Errorf("line %d: no publish for %s with codes %q (last: %q)", a.line, a.args[0], want, last)
	}
}

func (sc *scenario) watched(file string, typ int) {
	sc.c.notify(protocol.MethodWorkspaceDidChangeWatchedFiles, map[string]any{"changes": []any{map[string]any{"uri": sc.uri(file), "type": typ}}})
}

func markerWrite(sc *scenario, a annotation) {
	sc.need(a, 2)
	p := filepath.Join(sc.dir, a.args[0])
	_, err := os.Stat(p)
	typ := 2
	if err != nil {
		typ = 1
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		sc.t.Fatal(err)
	}
	// A different size guarantees a new stamp even within one mtime tick.
	if err := os.WriteFile(p, []byte(a.args[1]), 0o644); err != nil {
		sc.t.Fatal(err)
	}
	sc.files[a.args[0]] = a.args[1]
	sc.watched(a.args[0], typ)
}

func markerRemove(sc *scenario, a annotation) {
	sc.need(a, 1)
	if err := os.Remove(filepath.Join(sc.dir, a.args[0])); err != nil {
		sc.t.Fatal(err)
	}
	delete(sc.files, a.args[0])
	sc.watched(a.args[0], 3)
}

func markerRequested(sc *scenario, a annotation) {
	sc.need(a, 1)
	sc.eventually(a, func() string {
		sc.c.mu.Lock()
		defer sc.c.mu.Unlock()
		var got []string
		for _, r := range sc.c.requests {
			if r.method == a.args[0] {
				return ""
			}
			got = append(got, r.method)
		}
		return "requests so far: " + strings.Join(got, ", ")
	})
}
