package checker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// placeholderForms are the placeholder paths the table test tries: every
// form of docs/language.md#placeholder-paths, every key sys can hold
// (template.SysKeys, which TestSysKeysMatchRuntime in engine/run keeps
// equal to what the runtime sets), every old form upstream wrote under sys
// (api.OldForms) and a misspelt key.
func placeholderForms() []string {
	forms := []string{
		"args", "reply", "item", "args.x", "reply.x", "item.x",
		"var", "sys", "var.", "var..x", "var. set",
		"var.set", "var.set.a", "var.set.b", "var.unset", "var.list.1",
		"g", "g.k", "fn", "loc", "nope", "tasks", "1x",
		"sys.nope", "sys.Index",
	}
	for _, k := range template.SysKeys() {
		forms = append(forms, "sys."+k)
	}
	for _, o := range api.OldForms() {
		if strings.HasPrefix(o.Old, "sys.") {
			forms = append(forms, o.Old)
		}
	}
	return forms
}

// placeholderContexts place one prose line (%s) where a placeholder can
// stand: H1 prose, the first section before any reply, a section after a
// model round, a fanout arm. Each context's own Lua sets the globals the
// forms name (g, fn, var.set), with the same setup everywhere.
var placeholderContexts = []struct{ name, body string }{
	{"h1", "# T\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\n%[1]s\n```\n\nSay %[2]s.\n\n## Main\n\nHello.\n"},
	{"first", "# T\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\n%[1]s\n```\n\n## Main\n\n```lua\n%[1]s\n```\n\nSay %[2]s.\n"},
	{"after-round", "# T\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\n%[1]s\n```\n\n## Main\n\nHello.\n\n```lua\n%[1]s\n```\n\nSay %[2]s.\n"},
	{"arm", "# T\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\n%[1]s\n```\n\n## Main\n\n```lua\nfanout(\"### Arm\", {\"a\"})\n```\n\n### Arm\n\n```lua\n%[1]s\n```\n\nSay %[2]s.\n"},
}

const placeholderSetup = `g = {k = "v"}
fn = function() return 1 end
var.set = {a = "x"}
var.list = {"one"}
local loc = 1`

// TestPlaceholderRefusals holds the checker to the engine for every
// placeholder form in every context: where the engine refuses it (the run
// fails with a Substitution error at its line) check reports an error at
// that line, and where the engine renders it check reports no error there.
func TestPlaceholderRefusals(t *testing.T) {
	srv := gatewaytest.New(t, "k-placeholders")
	srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("ok") }
	refused := 0
	for _, c := range placeholderContexts {
		for _, form := range placeholderForms() {
			ph := "{{ " + form + " }}"
			src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n" + fmt.Sprintf(c.body, placeholderSetup, ph)
			p := parse.Parse("p.md", []byte(src))
			if len(p.Errors) > 0 {
				t.Fatalf("%s %s: parse: %v", c.name, ph, p.Errors[0])
			}
			line := p.File.Line(strings.Index(src, ph))
			cfg := run.Config{Input: "in", Store: store.New(), Execution: "t"}
			cfg.Models.Client = gateway.New(srv.Config())
			cfg.Models.Catalog = srv.Catalog
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := run.Run(ctx, p, cfg)
			cancel()
			var re *run.RunError
			fails := errors.As(err, &re) && re.Kind == run.KindSubstitution
			if err != nil && !fails {
				t.Fatalf("%s %s: the run fails otherwise: %v", c.name, ph, err)
			}
			var errs []string
			for _, d := range checker.Check(p, nil) {
				if d.Severity == analysis.Error && p.File.Line(d.Span.Start) == line {
					errs = append(errs, d.Code+": "+d.Message)
				}
			}
			switch {
			case fails:
				refused++
				if re.Line != line {
					t.Errorf("%s %s: the engine fails at line %d, want %d", c.name, ph, re.Line, line)
				}
				if len(errs) == 0 {
					t.Errorf("%s %s: the engine refuses it (%s) but check reports no error", c.name, ph, re.Msg)
				}
			case len(errs) > 0:
				t.Errorf("%s %s: the engine renders it but check reports %q", c.name, ph, errs)
			}
		}
	}
	if refused == 0 {
		t.Fatal("the engine refused no form: the table tests nothing")
	}
}
