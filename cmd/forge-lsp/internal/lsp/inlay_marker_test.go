package lsp

import (
	"encoding/json"
	"strings"
	"time"

	"go.lsp.dev/protocol"
)

// @inlay(file, "pattern|", "label substring")  an inlay hint at the cursor (default: the
//
//	pattern's end) whose label contains the substring
//
// @noinlay(file, "pattern")                     no inlay hint on the pattern's line
// @waitdiag(file, "code", "message substring")  some publish for file has a diagnostic with
//
//	this code and message (for diagnostics that wait on the model catalog)
func init() {
	markers["inlay"] = markerInlay
	markers["noinlay"] = markerInlay
	markers["waitdiag"] = markerWaitDiag
}

func markerInlay(sc *scenario, a annotation) {
	sc.need(a, 2)
	file, pat := a.args[0], a.args[1]
	if !strings.Contains(pat, "|") {
		pat += "|"
	}
	pos := sc.locate(a, file, pat)
	var hints []inlayHint
	sc.c.mustCall(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": sc.uri(file)},
		"range": protocol.Range{End: protocol.Position{Line: 1 << 20}}}, &hints)
	var onLine []string
	for _, h := range hints {
		if h.Position.Line != pos.Line {
			continue
		}
		onLine = append(onLine, mustJSON(h.Position)+" "+h.Label)
		if a.name == "inlay" && h.Position == pos && strings.Contains(h.Label, a.args[2]) {
			return
		}
	}
	if a.name == "noinlay" && len(onLine) == 0 {
		return
	}
	sc.t.Errorf("line %d: @%s%q: hints on the line: %v", a.line, a.name, a.args[1:], onLine)
}

func markerWaitDiag(sc *scenario, a annotation) {
	sc.need(a, 3)
	uri := sc.uri(a.args[0])
	_, _, ok := sc.c.waitFor(0, 20*time.Second, func(n note) bool {
		var p publishParams
		if n.method != protocol.MethodTextDocumentPublishDiagnostics || json.Unmarshal(n.params, &p) != nil || string(p.URI) != uri {
			return false
		}
		for _, d := range p.Diagnostics {
			if toString(d.Code) == a.args[1] && strings.Contains(d.Message, a.args[2]) {
				return true
			}
		}
		return false
	})
	if !ok {
		sc.t.Errorf("line %d: no %s diagnostic mentioning %q for %s", a.line, a.args[1], a.args[2], a.args[0])
	}
}
