package lsp

import (
	"fmt"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"go.lsp.dev/protocol"
)

// @semantic(file, "pat|tern", "type", "mod,mod")  a token starts at the cursor with
//
//	exactly this type and (when given) exactly these modifiers ("" for none)
//
// @nosemantic(file, "pat|tern")                    no token starts at the cursor
//
// Each also checks that a range request for the cursor's line returns
// exactly the full result's tokens on that line.
func init() {
	markers["semantic"] = markerSemantic
	markers["nosemantic"] = markerSemantic
}

type decodedTok struct {
	line, char, length uint32
	typ                string
	mods               string
}

func (t decodedTok) String() string {
	return fmt.Sprintf("%d:%d+%d %s[%s]", t.line, t.char, t.length, t.typ, t.mods)
}

// decodeSemantic decodes LSP's relative encoding with the server's legend.
func decodeSemantic(sc *scenario, data []uint32) []decodedTok {
	if len(data)%5 != 0 {
		sc.t.Fatalf("semantic token data has %d integers, not a multiple of 5", len(data))
	}
	var out []decodedTok
	var line, char uint32
	for i := 0; i < len(data); i += 5 {
		if data[i] > 0 {
			line += data[i]
			char = data[i+1]
		} else {
			char += data[i+1]
		}
		if int(data[i+3]) >= len(features.SemanticTypes) {
			sc.t.Fatalf("token type %d outside the legend", data[i+3])
		}
		var mods []string
		for b, m := range features.SemanticModifiers {
			if data[i+4]&(1<<b) != 0 {
				mods = append(mods, m)
			}
		}
		if data[i+4]>>len(features.SemanticModifiers) != 0 {
			sc.t.Fatalf("token modifiers %b outside the legend", data[i+4])
		}
		sort.Strings(mods)
		out = append(out, decodedTok{line, char, data[i+2], features.SemanticTypes[data[i+3]], strings.Join(mods, ",")})
	}
	return out
}

func markerSemantic(sc *scenario, a annotation) {
	want := 4
	if a.name == "nosemantic" {
		want = 2
	}
	sc.need(a, want-1)
	file := a.args[0]
	pos := sc.locate(a, file, a.args[1])
	doc := map[string]any{"uri": sc.uri(file)}
	var full semanticTokensResult
	sc.c.mustCall(protocol.MethodSemanticTokensFull, map[string]any{"textDocument": doc}, &full)
	toks := decodeSemantic(sc, full.Data)
	var found *decodedTok
	var onLine []decodedTok
	for i, t := range toks {
		if t.line == pos.Line {
			onLine = append(onLine, t)
			if t.char == pos.Character {
				found = &toks[i]
			}
		}
	}
	switch {
	case a.name == "nosemantic" && found != nil:
		sc.t.Errorf("line %d: unexpected token %v", a.line, *found)
	case a.name == "semantic" && found == nil:
		sc.t.Errorf("line %d: no token at %d:%d; tokens on the line: %v", a.line, pos.Line, pos.Character, onLine)
	case a.name == "semantic":
		if found.typ != a.args[2] {
			sc.t.Errorf("line %d: token %v has type %s, want %s", a.line, *found, found.typ, a.args[2])
		}
		if len(a.args) > 3 {
			ms := strings.Split(a.args[3], ",")
			if a.args[3] == "" {
				ms = nil
			}
			sort.Strings(ms)
			if found.mods != strings.Join(ms, ",") {
				sc.t.Errorf("line %d: token %v has modifiers [%s], want [%s]", a.line, *found, found.mods, strings.Join(ms, ","))
			}
		}
	}
	var ranged semanticTokensResult
	sc.c.mustCall(protocol.MethodSemanticTokensRange, map[string]any{"textDocument": doc, "range": protocol.Range{
		Start: protocol.Position{Line: pos.Line}, End: protocol.Position{Line: pos.Line, Character: 10000},
	}}, &ranged)
	got := fmt.Sprint(decodeSemantic(sc, ranged.Data))
	if got != fmt.Sprint(onLine) {
		sc.t.Errorf("line %d: range request for line %d gave %s, the full result has %v", a.line, pos.Line, got, onLine)
	}
}
