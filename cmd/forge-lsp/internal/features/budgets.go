package features

import (
	"fmt"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/template"
	"github.com/forge-lsp/forge-lsp/engine/tokens"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// Budget is the static token estimate of one prose block and of the
// model round that sends it.
type Budget struct {
	Prose   *parse.Prose
	Section *parse.Section // nil in the H1
	// Own is the block's tokens with unknown placeholders left out (their
	// lower bound, the empty string); Placeholders counts them.
	Own, Placeholders int
	Round             tokens.Round
	// Model is the bound model alias and ModelDesc its description, when
	// known; Catalog the catalog model it resolves to (nil without a
	// catalog).
	Model, ModelDesc string
	Catalog          *gateway.Model
}

// budgetMemo maps prose text to its counts; dropped whole when large.
var budgetMemo = struct {
	sync.Mutex
	m map[string][2]int
}{m: map[string][2]int{}}

// proseTokens counts a prose block's literal text, memoised by text: an
// edit re-counts only the blocks it touched.
func proseTokens(pr *parse.Prose) (own, placeholders int) {
	key := pr.Text
	budgetMemo.Lock()
	if v, ok := budgetMemo.m[key]; ok {
		budgetMemo.Unlock()
		return v[0], v[1]
	}
	budgetMemo.Unlock()
	t, _ := template.Parse(pr.Text, 0)
	var b strings.Builder
	for _, n := range t.Nodes {
		if n.Kind == template.Text {
			b.WriteString(n.Text)
		} else {
			placeholders++
		}
	}
	own = tokens.Count(strings.TrimSpace(b.String()))
	budgetMemo.Lock()
	if len(budgetMemo.m) > 4096 {
		budgetMemo.m = map[string][2]int{}
	}
	budgetMemo.m[key] = [2]int{own, placeholders}
	budgetMemo.Unlock()
	return own, placeholders
}

func computeBudgets(snap *Snapshot) []Budget {
	pr := snap.Prompt
	prog := snap.Program()
	cat := snap.Catalog()

	// H1 facts: tool bindings (alias -> spec), tools.always, models.
	bound := map[string]tokens.Tool{}
	var always []string
	models := map[string]string{} // alias -> description
	defaultModel := ""
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind":
			alias, _, ok := prog.StringArg(c, 0)
			capability, _, ok2 := prog.StringArg(c, 1)
			if !ok || !ok2 {
				continue
			}
			t := tokens.Tool{Name: alias}
			if ct, _ := ResolveTool(cat, capability); ct != nil {
				t.Description, t.Parameters = ct.Description, ct.Schema
			}
			if over, _, ok := prog.StringArg(c, 2); ok {
				t.Description = over
			}
			bound[alias] = t
		case "tools.always":
			if alias, _, ok := prog.StringArg(c, 0); ok {
				always = append(always, alias)
			}
		case "models.bind", "models.default":
			alias, _, ok := prog.StringArg(c, 0)
			desc, _, ok2 := prog.StringArg(c, 1)
			if ok && ok2 {
				models[alias] = desc
				if c.Canonical() == "models.default" {
					defaultModel = alias
				}
			}
		}
	}
	var out []Budget
	unit := func(u *program.Unit, sec *parse.Section, blocks []*parse.Block) {
		scope := append([]string(nil), always...)
		var locals []tokens.Tool
		model := defaultModel
		var history []int
		for i, b := range blocks {
			// The calls of the chunks before this block have run.
			for _, c := range u.Calls {
				if prog.ChunkOf(c).Block != i-1 { // the shared chunk (-1) runs first

					continue
				}
				switch c.Canonical() {
				case "tools.add", "tools.always":
					if alias, _, ok := prog.StringArg(c, 0); ok {
						scope = append(scope, alias)
					}
				case "tools.add_local":
					name, _, ok := prog.StringArg(c, 0)
					desc, _, _ := prog.StringArg(c, 1)
					if ok {
						locals = append(locals, tokens.Tool{Name: name, Description: desc})
					}
				case "models.use":
					if alias, _, ok := prog.StringArg(c, 0); ok {
						model = alias
					}
				}
			}
			if b.Kind != parse.ProseBlock {
				continue
			}
			own, ph := proseTokens(b.Prose)
			history = append(history, own)
			pb := Budget{Prose: b.Prose, Section: sec, Own: own, Placeholders: ph, Model: model, ModelDesc: models[model]}
			pb.Round.Messages = append([]int(nil), history...)
			seen := map[string]bool{}
			for _, alias := range scope {
				if seen[alias] {
					continue
				}
				seen[alias] = true
				t, ok := bound[alias]
				if !ok {
					t = tokens.Tool{Name: alias}
				}
				pb.Round.Tools = append(pb.Round.Tools, t)
			}
			pb.Round.Tools = append(pb.Round.Tools, locals...)
			for _, t := range pb.Round.Tools {
				pb.Round.ToolTokens = append(pb.Round.ToolTokens, tokens.ToolTokens(t))
			}
			out = append(out, pb)
		}
	}
	unit(prog.H1, nil, pr.H1Blocks)
	for _, u := range prog.Sections {
		unit(u, u.Section, u.Section.Blocks)
	}
	return out
}

// WithModels returns a copy of bs with each budget's model resolved
// against the gateway catalog (nil when none was fetched).
func WithModels(bs []Budget, catalog []gateway.Model) []Budget {
	if len(catalog) == 0 {
		return bs
	}
	bs = append([]Budget(nil), bs...)
	entries := make([]toolrule.Entry, len(catalog))
	for i, m := range catalog {
		entries[i] = toolrule.Entry{ID: toolrule.ID{Server: "gateway", Name: m.ID}, Name: "model", Description: m.Description}
	}
	p := toolrule.NewPicker(entries, toolrule.DefaultPickerConfig())
	for i := range bs {
		if bs[i].ModelDesc == "" {
			continue
		}
		d := p.Resolve(bs[i].ModelDesc)
		if d.Err("model", bs[i].ModelDesc) != nil || len(d.IDs) == 0 {
			continue
		}
		for k := range catalog {
			if catalog[k].ID == d.IDs[0].Name {
				bs[i].Catalog = &catalog[k]
			}
		}
	}
	return bs
}

// BudgetMarkdown describes one block's estimate for hover.
func BudgetMarkdown(b Budget) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "**context budget** (%s, estimated)\n\n", tokens.Encoding)
	fmt.Fprintf(&sb, "- this prose block: %d tokens", b.Own)
	if b.Placeholders > 0 {
		fmt.Fprintf(&sb, " + %d placeholder(s) counted as empty", b.Placeholders)
	}
	sb.WriteString("\n")
	r := b.Round
	fmt.Fprintf(&sb, "- model round lower bound: **%d tokens**\n", r.Total())
	fmt.Fprintf(&sb, "  - conversation: %d tokens in %d user message(s) (earlier replies not counted)\n", r.History(), len(r.Messages))
	if len(r.Tools) > 0 {
		names := make([]string, len(r.Tools))
		for i, t := range r.Tools {
			names[i] = fmt.Sprintf("`%s` %d", t.Name, r.ToolTokens[i])
		}
		fmt.Fprintf(&sb, "  - tool schemas: %d tokens (%s)\n", r.ToolTotal(), strings.Join(names, ", "))
	} else {
		sb.WriteString("  - tool schemas: none in scope\n")
	}
	fmt.Fprintf(&sb, "  - message framing: %d tokens\n", r.Framing())
	switch {
	case b.Catalog != nil && b.Catalog.Context > 0:
		fmt.Fprintf(&sb, "- model `%s` → `%s`: context %d tokens (%.0f%% used at least)\n", b.Model, b.Catalog.ID, b.Catalog.Context, 100*float64(r.Total())/float64(b.Catalog.Context))
	case b.Model != "":
		fmt.Fprintf(&sb, "- model `%s` (no catalog: its context size is not known)\n", b.Model)
	}
	return sb.String()
}

// BudgetAt returns the estimate of the prose block at off, or of the
// last prose block of the section whose heading is at off.
func BudgetAt(snap *Snapshot, off int) (*Budget, bool) {
	bs := snap.Budgets()
	for i := range bs {
		if bs[i].Prose.Span.Start <= off && off <= bs[i].Prose.Span.End {
			return &bs[i], true
		}
	}
	var last *Budget
	for i := range bs {
		if sec := bs[i].Section; sec != nil && sec.Heading != nil && sec.Heading.Span.Start <= off && off < sec.Heading.Span.End {
			last = &bs[i]
		}
	}
	return last, last != nil
}

// ContextBudget reports the rounds of bs (with their models resolved,
// WithModels) that do not fit their model's context: the context-budget
// findings.
func ContextBudget(bs []Budget) []analysis.Diagnostic {
	var out []analysis.Diagnostic
	for _, b := range bs {
		if b.Catalog == nil || b.Catalog.Context == 0 || uint64(b.Round.Total()) <= uint64(b.Catalog.Context) {
			continue
		}
		out = append(out, analysis.Diagnostic{
			Span: b.Prose.Span,
			Code: "context-budget",
			Message: fmt.Sprintf("this model round sends at least %d tokens (%s estimate), more than model %q (%s) accepts (%d); shorten the prose, send fewer tools, or bind a model with a larger context",
				b.Round.Total(), tokens.Encoding, b.Model, b.Catalog.ID, b.Catalog.Context),
		})
	}
	return out
}

// CountedProse reports how many distinct prose texts have been counted
// since ForgetCountedProse: a test's proof that nothing counted prose
// tokens (and so loaded the token vocabulary) without a reason.
func CountedProse() int {
	budgetMemo.Lock()
	defer budgetMemo.Unlock()
	return len(budgetMemo.m)
}

// ForgetCountedProse empties the memo of counted prose texts.
func ForgetCountedProse() {
	budgetMemo.Lock()
	budgetMemo.m = map[string][2]int{}
	budgetMemo.Unlock()
}
