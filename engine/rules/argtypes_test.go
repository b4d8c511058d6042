package rules_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

// TestArgTypesMatchRuntime runs, for every parameter rules.ArgTypes
// declares, a call that passes a table there (a type no declaration
// accepts) and otherwise valid arguments, and checks that the engine
// refuses it at that call with the declared message, while the same call
// with an accepted value runs: the runtime and the checker read one
// declaration of what each parameter takes.
func TestArgTypesMatchRuntime(t *testing.T) {
	valid := map[string][]string{
		"log":                 {`"hi"`},
		"untrusted":           {`"hi"`},
		"execute":             {`"## W"`, `"in"`},
		"store.write":         {`"a.txt"`, `"x"`},
		"store.append":        {`"a.txt"`, `"x"`},
		"store.read":          {`"a.txt"`, `1`, `1`},
		"store.read_numbered": {`"a.txt"`, `1`, `1`},
		"store.str_replace":   {`"a.txt"`, `"x"`, `"y"`},
		"store.delete":        {`"a.txt"`},
		"store.glob":          {`"*.txt"`},
		"store.exists":        {`"a.txt"`},
	}
	for fn, params := range rules.ArgTypes {
		args, ok := valid[fn]
		if !ok {
			t.Errorf("%s: no valid arguments in the test; add them", fn)
			continue
		}
		if err := runCall(fn, args); err != nil {
			t.Errorf("%s(%s) with accepted arguments fails: %v", fn, strings.Join(args, ", "), err)
		}
		for i, p := range params {
			if p == nil {
				continue
			}
			bad := append([]string(nil), args...)
			bad[i] = "{}"
			err := runCall(fn, bad)
			want := rules.Arg(fn, i, rules.Value{Type: "table", Len: 0})
			if want == nil {
				t.Errorf("%s #%d: the declaration accepts a table", fn, i+1)
				continue
			}
			if err == nil {
				t.Errorf("%s(%s): the engine accepts a table for parameter %d, but rules.ArgTypes refuses it", fn, strings.Join(bad, ", "), i+1)
				continue
			}
			// gopher-lua names the function itself in its own argument
			// errors; the part after it is the declaration's.
			w := want.Error()
			if _, tail, ok := strings.Cut(w, " to "+fn+" "); ok {
				w = tail
			}
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s #%d: the engine says %q, the declaration %q", fn, i+1, err, want)
			}
		}
	}
}

// runCall runs a prompt whose one section writes a.txt, calls fn with
// args and returns.
func runCall(fn string, args []string) error {
	src := fmt.Sprintf("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## Main\n\n```lua\nstore.write(\"a.txt\", \"x\\n\")\nlocal _ = %s(%s)\nreturn \"ok\"\n```\n\n## W\n\n---\n\n```lua\nreturn \"w\"\n```\n", fn, strings.Join(args, ", "))
	p := parse.Parse("t.md", []byte(src))
	if len(p.Errors) > 0 {
		return errors.New(p.Errors[0].Message)
	}
	_, err := run.Run(context.Background(), p, run.Config{Input: "in", Store: store.New(), Execution: "argtypes"})
	return err
}
