package lsp

import (
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// @highlight(file, "pat|", "target|"...)        the highlights at the cursor start exactly at the targets' cursors
// @selection(file, "pat|", "text"...)           the selection ranges at the cursor, innermost first, cover these texts
// @link(file, "pattern", "target suffix")       a document link covers exactly pattern, its target ends with the suffix
// @calls(file, "pat|", "in"|"out", "name"...)   the call hierarchy item at the cursor has exactly these callers/callees
func init() {
	markers["highlight"] = markerHighlight
	markers["selection"] = markerSelection
	markers["link"] = markerLink
	markers["calls"] = markerCalls
}

func markerHighlight(sc *scenario, a annotation) {
	sc.need(a, 2)
	var hs []protocol.DocumentHighlight
	sc.c.mustCall(protocol.MethodTextDocumentDocumentHighlight, sc.docPos(a), &hs)
	var got, want []string
	for _, h := range hs {
		got = append(got, mustJSON(h.Range.Start))
	}
	for _, t := range a.args[2:] {
		want = append(want, mustJSON(sc.locate(a, a.args[0], t)))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		sc.t.Errorf("line %d: highlights start at %v, want %v", a.line, got, want)
	}
}

func markerSelection(sc *scenario, a annotation) {
	sc.need(a, 3)
	var res []*selectionRangeResult
	pos := sc.locate(a, a.args[0], a.args[1])
	sc.c.mustCall(methodSelectionRange, map[string]any{"textDocument": map[string]any{"uri": sc.uri(a.args[0])}, "positions": []protocol.Position{pos}}, &res)
	if len(res) != 1 || res[0] == nil {
		sc.t.Fatalf("line %d: %d selection ranges for one position", a.line, len(res))
	}
	f := sc.lspFile(sc.files[a.args[0]])
	var texts []string
	prev := protocol.Range{}
	for r := res[0]; r != nil; r = r.Parent {
		sp := source.Span{Start: offsetOf(f, r.Range.Start), End: offsetOf(f, r.Range.End)}
		if len(texts) > 0 && !(offsetOf(f, r.Range.Start) <= offsetOf(f, prev.Start) && offsetOf(f, r.Range.End) >= offsetOf(f, prev.End)) {
			sc.t.Errorf("line %d: range %v does not contain its child %v", a.line, r.Range, prev)
		}
		prev = r.Range
		texts = append(texts, f.Text(sp))
	}
	for i, want := range a.args[2:] {
		if i >= len(texts) || texts[i] != want {
			sc.t.Errorf("line %d: selection ranges %q, want %q first", a.line, texts, a.args[2:])
			return
		}
	}
}

func markerLink(sc *scenario, a annotation) {
	sc.need(a, 3)
	var links []documentLinkResult
	sc.c.mustCall(protocol.MethodTextDocumentDocumentLink, map[string]any{"textDocument": map[string]any{"uri": sc.uri(a.args[0])}}, &links)
	text := sc.files[a.args[0]]
	at := strings.Index(text, a.args[1])
	if at < 0 {
		sc.t.Fatalf("line %d: no %q in %s", a.line, a.args[1], a.args[0])
	}
	f := sc.lspFile(text)
	want := lspRange(f, source.Span{Start: at, End: at + len(a.args[1])})
	var all []string
	for _, l := range links {
		all = append(all, mustJSON(l.Range)+" "+l.Target)
		if l.Range == want && strings.HasSuffix(l.Target, a.args[2]) {
			return
		}
	}
	sc.t.Errorf("line %d: no link at %s to …%s; links: %v", a.line, mustJSON(want), a.args[2], all)
}

func markerCalls(sc *scenario, a annotation) {
	sc.need(a, 3)
	var items []callItem
	sc.c.mustCall(protocol.MethodTextDocumentPrepareCallHierarchy, sc.docPos(a), &items)
	if len(items) != 1 {
		sc.t.Fatalf("line %d: %d call hierarchy items at the cursor", a.line, len(items))
	}
	var got []string
	switch a.args[2] {
	case "in":
		var res []callIncoming
		sc.c.mustCall(protocol.MethodCallHierarchyIncomingCalls, map[string]any{"item": items[0]}, &res)
		for _, c := range res {
			got = append(got, c.From.Name)
			if len(c.FromRanges) == 0 {
				sc.t.Errorf("line %d: caller %s without ranges", a.line, c.From.Name)
			}
		}
	case "out":
		var res []callOutgoing
		sc.c.mustCall(protocol.MethodCallHierarchyOutgoingCalls, map[string]any{"item": items[0]}, &res)
		for _, c := range res {
			got = append(got, c.To.Name)
		}
	default:
		sc.t.Fatalf("line %d: direction %q is not in or out", a.line, a.args[2])
	}
	want := append([]string(nil), a.args[3:]...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		sc.t.Errorf("line %d: %s calls %q, want %q", a.line, a.args[2], got, want)
	}
}
