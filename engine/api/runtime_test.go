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

// TestModelOptsMatchRuntime checks api.ModelOpts against the runtime's opts
// validation: every listed key with a valid value passes it (the run then
// fails later, for lack of a gateway, with a message that is not about
// opts), and an unlisted key is rejected.
func TestModelOptsMatchRuntime(t *testing.T) {
	valid := map[string]string{"boolean": "true", "integer>0": "4096", "number[0,2]": "0.5"}
	runH1 := func(lua string) error {
		src := "---\nname: probe\ndescription: d\npromptforge: 1\n---\n\n# T\n\n```lua\n" + lua + "\n```\n"
		_, err := run.Run(context.Background(), parse.Parse("probe.md", []byte(src)), run.Config{Store: store.New()})
		return err
	}
	for _, o := range api.ModelOpts {
		v, ok := valid[o.Type]
		if !ok {
			t.Fatalf("%s: unknown type %q", o.Name, o.Type)
		}
		err := runH1(fmt.Sprintf("models.bind(\"m\", \"a model\", { %s = %s })", o.Name, v))
		if err != nil && strings.Contains(err.Error(), "opts") {
			t.Errorf("runtime rejects opts key %s = %s: %v", o.Name, v, err)
		}
	}
	err := runH1(`models.bind("m", "a model", { temprature = 1 })`)
	if err == nil || !strings.Contains(err.Error(), `unknown models.bind opts key "temprature"`) {
		t.Errorf("unknown key: %v", err)
	}
}
