package features

import (
	"fmt"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// InlayHint is a label shown at Offset: Type marks a hint that names
// what a binding resolves to (LSP's Type kind), as against a count.
type InlayHint struct {
	Offset  int
	Label   string
	Tooltip string
	Type    bool
}

// InlayHints returns, inside span r, in file order: after each
// tools.bind (tools.need) the tool it resolves to, after each model
// binding the catalog model when a model catalog is known, and at the
// end of each prose block its estimated token count.
func InlayHints(snap *Snapshot, r source.Span) []InlayHint {
	var out []InlayHint
	in := func(off int) bool { return off >= r.Start && off <= r.End }
	prog := snap.Program()
	cat := snap.Catalog()
	bs := WithModels(snap.Budgets(), snap.Models)
	for _, c := range prog.Calls {
		end := prog.CallSpan(c).End
		if !in(end) || end <= prog.CallSpan(c).Start {
			continue
		}
		switch c.Canonical() {
		case "tools.bind":
			capability, _, ok := prog.StringArg(c, 1)
			if !ok {
				continue
			}
			label, tip := "", ""
			if ct, why := ResolveTool(cat, capability); ct != nil {
				label, tip = "→ "+ct.Wire, ct.ID.String()+": "+ct.Description
				if ct.Wire == "" {
					label = "→ " + ct.ID.String()
				}
			} else {
				label, tip = "→ ?", why
			}
			out = append(out, InlayHint{Offset: end, Label: label, Tooltip: tip, Type: true})
		case "models.bind", "models.default", "models.use":
			if len(snap.Models) == 0 {
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
			one := WithModels([]Budget{{ModelDesc: desc}}, snap.Models)
			if m := one[0].Catalog; m != nil {
				out = append(out, InlayHint{Offset: end, Label: "→ " + m.ID, Tooltip: fmt.Sprintf("%s: context %d tokens", m.Description, m.Context), Type: true})
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
		out = append(out, InlayHint{Offset: b.Prose.Span.End, Label: label, Tooltip: BudgetMarkdown(b)})
	}
	// In file order; hints at one offset keep the order above (a stable
	// insertion sort: the list is nearly sorted already).
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Offset < out[j-1].Offset; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
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
