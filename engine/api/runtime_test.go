package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

// probe builds Lua that returns, for every host function or table the
// table lists, "1" when it exists (is not nil) in the running VM and "0"
// otherwise. sys fields and handle members are skipped: reading an absent
// sys field raises, and handles need a binding.
func probe(entries []*api.Entry) string {
	var b strings.Builder
	b.WriteString("local out = {}\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "out[#out+1] = (%s ~= nil) and \"1\" or \"0\"\n", e.Name)
	}
	b.WriteString("return table.concat(out)\n")
	return b.String()
}

func hostEntries() []*api.Entry {
	var out []*api.Entry
	for _, e := range api.All() {
		if !e.Host || strings.HasPrefix(e.Name, "sys.") || strings.HasPrefix(e.Name, "Tool") ||
			strings.HasPrefix(e.Name, "Model") || e.Name == "tools.calls" || e.Kind == api.Value {
			continue
		}
		out = append(out, e)
		for _, s := range e.Synonyms {
			c := *e
			c.Name = s
			out = append(out, &c)
		}
	}
	return out
}

// TestMatchesRuntime runs real prompts through engine/run and checks that
// the table's Defined contexts match what the runtime installs in the H1
// VM and in a section VM.
func TestMatchesRuntime(t *testing.T) {
	entries := hostEntries()
	code := probe(entries)
	for _, c := range []struct {
		where api.Where
		body  string
	}{
		{api.H1, "# T\n\n```lua\n" + code + "```\n"},
		{api.Section, "# T\n\n## S\n\n```lua\n" + code + "```\n"},
	} {
		src := "---\nname: probe\ndescription: d\npromptforge: 1\n---\n\n" + c.body
		p := parse.Parse("probe.md", []byte(src))
		if len(p.Errors) > 0 {
			t.Fatalf("probe does not parse: %v", p.Errors[0])
		}
		got, err := run.Run(context.Background(), p, run.Config{Store: store.New()})
		if err != nil {
			t.Fatalf("%v probe: %v", c.where, err)
		}
		if len(got) != len(entries) {
			t.Fatalf("%v probe returned %q", c.where, got)
		}
		for i, e := range entries {
			want := e.Defined&c.where != 0
			if (got[i] == '1') != want {
				t.Errorf("%s: api says defined in %v = %v, runtime says %v", e.Name, c.where, want, got[i] == '1')
			}
		}
	}
}
