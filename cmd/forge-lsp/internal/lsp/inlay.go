package lsp

import (
	"context"
	"fmt"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// methodInlayHint is LSP 3.17's textDocument/inlayHint (the library
// predates it).
const methodInlayHint = "textDocument/inlayHint"

type inlayHintParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Range        protocol.Range                  `json:"range"`
}

// inlayHint is LSP 3.17's InlayHint with a string label.
type inlayHint struct {
	Position     protocol.Position `json:"position"`
	Label        string            `json:"label"`
	Kind         int               `json:"kind,omitempty"`
	Tooltip      string            `json:"tooltip,omitempty"`
	PaddingLeft  bool              `json:"paddingLeft,omitempty"`
	PaddingRight bool              `json:"paddingRight,omitempty"`
}

// inlayKindType is InlayHintKind.Type.
const inlayKindType = 1

// inlayHints returns, inside the requested range: after each tools.bind
// (tools.need) the tool it resolves to, after each model binding the
// catalog model when a catalog is known, and at the end of each prose
// block its estimated token count.
func (s *server) inlayHints(ctx context.Context, p *inlayHintParams) (any, error) {
	out := []inlayHint{}
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return out, nil
	}
	f := snap.file
	r := source.Span{Start: offsetOf(f, p.Range.Start), End: offsetOf(f, p.Range.End)}
	in := func(off int) bool { return off >= r.Start && off <= r.End }
	prog := snap.program()
	cat := s.catalogFor(ctx, snap)
	bs := features.WithModels(snap.proseBudgets(), snap.models)
	for _, c := range prog.Calls {
		if !in(prog.CallSpan(c).End) || prog.CallSpan(c).End <= prog.CallSpan(c).Start {
			continue
		}
		switch c.Canonical() {
		case "tools.bind":
			capability, _, ok := prog.StringArg(c, 1)
			if !ok {
				continue
			}
			label, tip := "", ""
			if ct, why := features.ResolveTool(cat.Catalog, capability); ct != nil {
				label, tip = "→ "+ct.Wire, ct.ID.String()+": "+ct.Description
				if ct.Wire == "" {
					label = "→ " + ct.ID.String()
				}
			} else {
				label, tip = "→ ?", why
			}
			out = append(out, inlayHint{Position: lspPos(f, prog.CallSpan(c).End), Label: label, Kind: inlayKindType, Tooltip: tip, PaddingLeft: true})
		case "models.bind", "models.default", "models.use":
			if len(snap.models) == 0 {
				continue
			}
			desc, _, ok := prog.StringArg(c, 1)
			if c.Canonical() == "models.use" {
				// models.use names an alias the H1 bound.
				alias, _, isStr := prog.StringArg(c, 0)
				desc, ok = h1Models(prog)[alias], isStr
			}
			if !ok || desc == "" {
				continue
			}
			one := features.WithModels([]features.Budget{{ModelDesc: desc}}, snap.models)
			if m := one[0].Catalog; m != nil {
				out = append(out, inlayHint{Position: lspPos(f, prog.CallSpan(c).End), Label: "→ " + m.ID, Kind: inlayKindType,
					Tooltip: fmt.Sprintf("%s: context %d tokens", m.Description, m.Context), PaddingLeft: true})
			}
		}
	}
	for _, b := range bs {
		if !in(b.Prose.Span.End) {
			continue
		}
		label := fmt.Sprintf("≈ %d tokens", b.Own)
		if len(b.Round.Messages) > 1 || len(b.Round.Tools) > 0 {
			label += fmt.Sprintf(" · round ≥ %d", b.Round.Total())
		}
		out = append(out, inlayHint{Position: lspPos(f, b.Prose.Span.End), Label: label, Tooltip: features.BudgetMarkdown(b), PaddingLeft: true})
	}
	sortHints(out)
	return out, nil
}

func sortHints(hs []inlayHint) {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && before(hs[j].Position, hs[j-1].Position); j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

func before(a, b protocol.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}

// h1Models maps the model aliases the H1 binds to their descriptions.
func h1Models(prog *program.Program) map[string]string {
	out := map[string]string{}
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "models.bind", "models.default":
			alias, _, ok := prog.StringArg(c, 0)
			desc, _, ok2 := prog.StringArg(c, 1)
			if ok && ok2 {
				out[alias] = desc
			}
		}
	}
	return out
}

var _ = register(func() []feature {
	return []feature{feature{method: methodInlayHint,
		serve:     docMethod(handle((*server).inlayHints), needBudgets),
		advertise: func(c *serverCapabilities) { c.InlayHintProvider = true }}}
})
