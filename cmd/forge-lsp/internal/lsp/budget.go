package lsp

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
	"github.com/forge-lsp/forge-lsp/engine/tokens"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// proseBudget is the static token estimate of one prose block and of the
// model round that sends it.
type proseBudget struct {
	prose   *parse.Prose
	section *parse.Section // nil in the H1
	// own is the block's tokens with unknown placeholders left out (their
	// lower bound, the empty string); placeholders counts them.
	own, placeholders int
	round             tokens.Round
	// model is the bound model alias and its description, when known;
	// catalog the catalog model it resolves to (nil without a catalog).
	model, modelDesc string
	catalog          *gateway.Model
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

// budgets returns the estimates of every prose block of the snapshot,
// in file order: the snapshot's memo, made ready outside s.mu by document
// requests and diagnostics jobs. The slice is shared: copy before
// changing it (withModels does).
func (s *server) budgets(snap *snapshot) []proseBudget {
	if bs, ok := snap.budgets.peek(); ok {
		return bs
	}
	return snap.proseBudgets(snap.inputs().catalog)
}

// proseBudgets computes (once) the estimates of every prose block, tool
// schemas from cat.
func (snap *snapshot) proseBudgets(cat *catalog) []proseBudget {
	bs, _ := snap.budgets.get(func() ([]proseBudget, bool) {
		if snap.prompt == nil {
			return nil, true
		}
		return computeBudgets(snap, cat), true
	})
	return bs
}

func computeBudgets(snap *snapshot, cat *catalog) []proseBudget {
	pr := snap.prompt
	prog := snap.program()

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
			if ct, _ := cat.resolve(capability); ct != nil {
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
	var out []proseBudget
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
			pb := proseBudget{prose: b.Prose, section: sec, own: own, placeholders: ph, model: model, modelDesc: models[model]}
			pb.round.Messages = append([]int(nil), history...)
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
				pb.round.Tools = append(pb.round.Tools, t)
			}
			pb.round.Tools = append(pb.round.Tools, locals...)
			for _, t := range pb.round.Tools {
				pb.round.ToolTokens = append(pb.round.ToolTokens, tokens.ToolTokens(t))
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

// withModels returns a copy of bs with each budget's model resolved
// against the gateway catalog (nil when none was fetched).
func withModels(bs []proseBudget, catalog []gateway.Model) []proseBudget {
	if len(catalog) == 0 {
		return bs
	}
	bs = append([]proseBudget(nil), bs...)
	entries := make([]toolrule.Entry, len(catalog))
	for i, m := range catalog {
		entries[i] = toolrule.Entry{ID: toolrule.ID{Server: "gateway", Name: m.ID}, Name: "model", Description: m.Description}
	}
	p := toolrule.NewPicker(entries, toolrule.DefaultPickerConfig())
	for i := range bs {
		if bs[i].modelDesc == "" {
			continue
		}
		d := p.Resolve(bs[i].modelDesc)
		if d.Err("model", bs[i].modelDesc) != nil || len(d.IDs) == 0 {
			continue
		}
		for k := range catalog {
			if catalog[k].ID == d.IDs[0].Name {
				bs[i].catalog = &catalog[k]
			}
		}
	}
	return bs
}

// budgetMarkdown describes one block's estimate for hover.
func budgetMarkdown(b proseBudget) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "**context budget** (%s, estimated)\n\n", tokens.Encoding)
	fmt.Fprintf(&sb, "- this prose block: %d tokens", b.own)
	if b.placeholders > 0 {
		fmt.Fprintf(&sb, " + %d placeholder(s) counted as empty", b.placeholders)
	}
	sb.WriteString("\n")
	r := b.round
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
	case b.catalog != nil && b.catalog.Context > 0:
		fmt.Fprintf(&sb, "- model `%s` → `%s`: context %d tokens (%.0f%% used at least)\n", b.model, b.catalog.ID, b.catalog.Context, 100*float64(r.Total())/float64(b.catalog.Context))
	case b.model != "":
		fmt.Fprintf(&sb, "- model `%s` (no catalog: its context size is not known)\n", b.model)
	}
	return sb.String()
}

// budgetAt returns the estimate of the prose block at off, or of the
// last prose block of the section whose heading is at off.
func (s *server) budgetAt(snap *snapshot, off int) (*proseBudget, bool) {
	bs := s.budgets(snap)
	for i := range bs {
		if bs[i].prose.Span.Start <= off && off <= bs[i].prose.Span.End {
			return &bs[i], true
		}
	}
	var last *proseBudget
	for i := range bs {
		if sec := bs[i].section; sec != nil && sec.Heading != nil && sec.Heading.Span.Start <= off && off < sec.Heading.Span.End {
			last = &bs[i]
		}
	}
	return last, last != nil
}

// budgetFindings are the warnings for rounds whose lower bound exceeds
// their model's context (the snapshot's model catalog): the
// context-budget analyzer (checker.ContextBudget) run by the driver, so
// the configured severity and forge:ignore apply. The prose budgets must
// be ready (proseBudgets); the findings are then memoised.
func budgetFindings(snap *snapshot) []analysis.Diagnostic {
	if !snap.isPrompt || snap.prompt == nil || len(snap.models) == 0 {
		return nil
	}
	bs, ready := snap.budgets.peek()
	if !ready {
		return nil
	}
	ds, _ := snap.budgetFindings.get(func() ([]analysis.Diagnostic, bool) {
		a := checker.Supplied(checker.ContextBudget, func(*analysis.Pass) []analysis.Diagnostic {
			return contextBudget(withModels(bs, snap.models))
		})
		ds, err := analysis.Run(context.Background(), snap.prompt, []*analysis.Analyzer{a}, snap.inputs().config)
		return ds, err == nil
	})
	return ds
}

// contextBudget reports the rounds of bs that do not fit their model.
func contextBudget(bs []proseBudget) []analysis.Diagnostic {
	var out []analysis.Diagnostic
	for _, b := range bs {
		if b.catalog == nil || b.catalog.Context == 0 || uint64(b.round.Total()) <= uint64(b.catalog.Context) {
			continue
		}
		out = append(out, analysis.Diagnostic{
			Span: b.prose.Span,
			Code: "context-budget",
			Message: fmt.Sprintf("this model round sends at least %d tokens (%s estimate), more than model %q (%s) accepts (%d); shorten the prose, send fewer tools, or bind a model with a larger context",
				b.round.Total(), tokens.Encoding, b.model, b.catalog.ID, b.catalog.Context),
		})
	}
	return out
}

// withBudgetHover adds the context budget to a hover: below a section
// heading's hover, and as the hover of prose that has no other.
func (s *server) withBudgetHover(snap *snapshot, off int, text string, sp source.Span, ok bool) (string, source.Span, bool) {
	b, found := s.budgetAt(snap, off)
	if !found {
		return text, sp, ok
	}
	one := withModels([]proseBudget{*b}, snap.models)
	md := budgetMarkdown(one[0])
	inProse := b.prose.Span.Start <= off && off <= b.prose.Span.End
	switch {
	case ok && !inProse:
		return text + "\n\n---\n\n" + md, sp, true
	case !ok && inProse:
		return md, b.prose.Span, true
	}
	return text, sp, ok
}
