package lsp

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// The Run section lens says when the section, run alone, reads a var key
// only the sections before it set.
func TestRunSectionLensAlone(t *testing.T) {
	const src = "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# P\n\n" +
		"## A\n\n```lua\nvar.topic = \"x\"\n```\n\n" +
		"## B\n\n```lua\nlog(\"topic: \" .. var.topic)\nreturn \"b\"\n```\n"
	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	uri := "file:///lens/p.md"
	c.open(uri, src)
	var lenses []protocol.CodeLens
	c.mustCall(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": uri}}, &lenses)
	var titles []string
	for _, l := range lenses {
		titles = append(titles, l.Command.Title)
	}
	if got := strings.Join(titles, "|"); got != "▶ Run prompt|▶ Run section|▶ Run section (alone, var.topic is unset)" {
		t.Fatalf("lens titles %q", got)
	}
}
