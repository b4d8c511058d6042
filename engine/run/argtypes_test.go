package run

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/rules"
)

// argCase places a call of one host function with accepted arguments:
// in the H1 (h1) or in section Main, after pre.
type argCase struct {
	h1   bool
	pre  string
	args []string
}

const bindSearch = `tools.bind("search", "web search capability")`

var argCases = map[string]argCase{
	"log":                 {args: []string{`"hi"`}},
	"untrusted":           {args: []string{`"hi"`}},
	"jump":                {args: []string{`"## W"`}},
	"execute":             {args: []string{`"## W"`, `"in"`}},
	"fanout":              {args: []string{`"## W"`, `{"a"}`}},
	"list_from_section":   {args: []string{`"## L"`}},
	"store.write":         {args: []string{`"a.txt"`, `"x"`}},
	"store.append":        {args: []string{`"a.txt"`, `"x"`}},
	"store.read":          {args: []string{`"a.txt"`, `1`, `"1"`}},
	"store.read_numbered": {args: []string{`"a.txt"`, `"1"`, `1`}},
	"store.str_replace":   {args: []string{`"a.txt"`, `"x"`, `"y"`}},
	"store.delete":        {args: []string{`"a.txt"`}},
	"store.glob":          {args: []string{`"*.txt"`}},
	"store.exists":        {args: []string{`"a.txt"`}},
	"tools.bind":          {h1: true, args: []string{`"search"`, `"web search capability"`, `"o"`}},
	"tools.need":          {h1: true, args: []string{`"search"`, `"web search capability"`, `"o"`}},
	"tools.always":        {h1: true, pre: bindSearch, args: []string{`"search"`, `"o"`}},
	"tools.add":           {args: []string{`"search"`, `"o"`}},
	"tools.add_local":     {args: []string{`"loc"`, `"d"`, `{}`, `function() return "x" end`}},
	"models.bind":         {h1: true, args: []string{`"m2"`, `"general assistant model"`, `{temperature = 1}`}},
	"models.need":         {h1: true, args: []string{`"m2"`, `"general assistant model"`, `{temperature = 1}`}},
	"models.default":      {h1: true, args: []string{`"m"`, `"general assistant model"`, `{temperature = 1}`}},
	"models.use":          {args: []string{`"m"`}},
	"models.get":          {args: []string{`"m"`}},
	"models.infer":        {args: []string{`"hi"`}},
	"Model:infer":         {args: []string{`"hi"`}},
}

// badValues are Lua values of the types a declaration may refuse, with
// their type names.
var badValues = []struct{ lua, typ string }{{"{}", "table"}, {"true", "boolean"}, {"function() end", "function"}, {"nil", "nil"}}

// runArgCall runs fn(args) placed as c places it; the H1 binds the
// default model m (unless fn is models.default) and the tool search.
func runArgCall(t *testing.T, fn string, c argCase, args []string) error {
	call := fmt.Sprintf("%s(%s)", fn, strings.Join(args, ", "))
	if fn == "Model:infer" {
		call = fmt.Sprintf(`models.get("m"):infer(%s)`, strings.Join(args, ", "))
	}
	h1 := defModel + "\n" + bindSearch
	switch {
	case fn == "models.default":
		h1 = ""
	case strings.HasPrefix(fn, "tools.") && c.h1:
		h1 = defModel
	}
	main := "store.write(\"a.txt\", \"x\\n\")\n" + c.pre + "\nlocal _ = " + call + "\nreturn \"ok\""
	if c.h1 {
		h1 += "\n" + c.pre + "\nlocal _ = " + call
		main = `return "ok"`
	}
	body := "## Main\n\n" + luaFence(main) + "## W\n\n" + luaFence(`return "w"`) + "## L\n\n---\n\n- a\n- b\n"
	h := newHarness(t)
	h.srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("ok") }
	_, err := h.run(prompt("", h1, body))
	return err
}

// TestArgTypesMatchRuntime runs, for every parameter rules.ArgTypes
// declares, a call that passes a value of a type the declaration
// refuses there, and otherwise accepted arguments, and checks that the
// engine refuses it at that call with the declared message, while the
// same call with accepted values runs: the runtime and the checker read
// one declaration of what each parameter takes.
func TestArgTypesMatchRuntime(t *testing.T) {
	for fn, params := range rules.ArgTypes {
		c, ok := argCases[fn]
		if !ok {
			t.Errorf("%s: no accepted arguments in argCases; add them", fn)
			continue
		}
		if err := runArgCall(t, fn, c, c.args); err != nil {
			t.Errorf("%s(%s) with accepted arguments fails: %v", fn, strings.Join(c.args, ", "), err)
		}
		for i, p := range params {
			if p == nil {
				continue
			}
			var bad []string
			var want error
			for _, b := range badValues {
				if want = rules.Arg(fn, i, rules.Value{Type: b.typ, Len: -1}); want != nil {
					bad = slices.Clone(c.args)
					bad[i] = b.lua
					break
				}
			}
			if bad == nil {
				t.Errorf("%s #%d: the declaration accepts every type", fn, i+1)
				continue
			}
			err := runArgCall(t, fn, c, bad)
			if err == nil {
				t.Errorf("%s(%s): the engine accepts it, but rules.ArgTypes refuses parameter %d", fn, strings.Join(bad, ", "), i+1)
				continue
			}
			// Lua's own argument errors name the function as the call
			// site does; the part after the name is the declaration's.
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

// TestArgTypesNumericStrings checks a declared number parameter that
// takes a string (store line numbers): the declaration and the engine
// agree on which strings read as numbers.
func TestArgTypesNumericStrings(t *testing.T) {
	c := argCases["store.read"]
	for _, s := range []string{`"1"`, `" 2 "`, `"0x1"`, `"one"`, `""`} {
		args := []string{c.args[0], s, "nil"}
		str, _ := strconv.Unquote(s)
		want := rules.Arg("store.read", 1, rules.Value{Type: "string", Str: str, Len: -1})
		err := runArgCall(t, "store.read", c, args)
		if str == "" {
			// An empty string (or one the checker does not know) is
			// never refused by the declaration: precision first.
			if want != nil || err == nil {
				t.Errorf("store.read(%s): declaration %v, engine %v", strings.Join(args, ", "), want, err)
			}
			continue
		}
		if (want == nil) != (err == nil) {
			t.Errorf("store.read(%s): declaration %v, engine %v", strings.Join(args, ", "), want, err)
		}
	}
}

// TestArgTypesHostObjects checks the declared host object types: a
// Model object where tools.add takes an alias or a Tool object is
// refused with the declared message, a Tool object accepted.
func TestArgTypesHostObjects(t *testing.T) {
	c := argCases["tools.add"]
	want := rules.Arg("tools.add", 0, rules.Value{Type: "userdata", Handle: "Model", Len: -1})
	if want == nil {
		t.Fatal("the declaration accepts a Model object for tools.add")
	}
	err := runArgCall(t, "tools.add", c, []string{`models.get("m")`})
	if err == nil || !strings.Contains(err.Error(), want.Error()) {
		t.Errorf("tools.add(Model): the engine says %v, the declaration %q", err, want)
	}
	if err := runArgCall(t, "tools.add", c, []string{"search"}); err != nil {
		t.Errorf("tools.add(Tool) fails: %v", err)
	}
}

// undeclared are the host function parameters rules.ArgTypes leaves nil,
// each with the rule of engine/rules that checks it instead.
var undeclared = map[string]string{
	"fanout #2":         "rules.FanoutCollection (a var table counts)",
	"models.bind #1":    "rules.ModelArg",
	"models.bind #2":    "rules.ModelArg",
	"models.bind #3":    "rules.ModelOptsTable, rules.ModelOpt",
	"models.need #1":    "rules.ModelArg",
	"models.need #2":    "rules.ModelArg",
	"models.need #3":    "rules.ModelOptsTable, rules.ModelOpt",
	"models.default #1": "rules.ModelArg",
	"models.default #2": "rules.ModelArg (when given)",
	"models.default #3": "rules.ModelOptsTable, rules.ModelOpt",
}

// TestHostArgsDeclared is the coverage half of one declaration: every
// host function the runtime installs (and the Model:infer method) that
// takes parameters has one rules.ArgTypes member per parameter of its
// engine/api signature, each declared or listed in undeclared with the
// engine/rules function that checks it; and no host implementation
// validates an argument's type by hand (gopher-lua's Check* functions,
// ArgError or TypeError, or a "got %s" message), so a new host function
// cannot check what the declaration cannot state.
func TestHostArgsDeclared(t *testing.T) {
	names := []string{"Model:infer"}
	for name := range hostFuncs() {
		names = append(names, name)
	}
	seen := map[string]bool{}
	for _, name := range names {
		e, ok := api.Lookup(name)
		if !ok {
			t.Errorf("%s: not in engine/api", name)
			continue
		}
		ps := e.Params()
		decl, ok := rules.ArgTypes[name]
		if len(ps) == 0 {
			if ok {
				t.Errorf("%s takes no parameters, but rules.ArgTypes declares %d", name, len(decl))
			}
			continue
		}
		if len(decl) != len(ps) {
			t.Errorf("%s: engine/api gives %d parameters, rules.ArgTypes declares %d", name, len(ps), len(decl))
			continue
		}
		for i, d := range decl {
			key := fmt.Sprintf("%s #%d", name, i+1)
			seen[key] = true
			if _, listed := undeclared[key]; d == nil && !listed {
				t.Errorf("%s (%s) is neither declared in rules.ArgTypes nor listed in undeclared", key, ps[i].Name)
			} else if d != nil && listed {
				t.Errorf("%s is declared in rules.ArgTypes and listed in undeclared", key)
			}
		}
	}
	for key := range undeclared {
		if !seen[key] {
			t.Errorf("undeclared lists %s, which no host function has", key)
		}
	}
	for fn, at := range handCheckedArgs(t) {
		t.Errorf("%s: %s validates an argument by hand; declare the parameter in rules.ArgTypes and call checkArg", at, fn)
	}
}

// handCheckedArgs finds, in the host implementations (the methods
// hostFuncs names, handleInfer, and the VM methods and functions of this
// package they call directly), hand-written argument type checks.
func handCheckedArgs(t *testing.T) map[string]string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	decls := map[string]*ast.FuncDecl{}
	for _, f := range pkgs["run"].Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				decls[fd.Name.Name] = fd
			}
		}
	}
	// The roots: what fillHostFuncs refers to, and handleInfer.
	roots := []string{"handleInfer"}
	ast.Inspect(decls["fillHostFuncs"], func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if _, ok := decls[sel.Sel.Name]; ok {
				roots = append(roots, sel.Sel.Name)
			}
		}
		return true
	})
	if len(roots) < 20 {
		t.Fatalf("found %d host implementations in fillHostFuncs; the scan is broken", len(roots))
	}
	scan := map[string]bool{}
	for _, r := range roots {
		scan[r] = true
		ast.Inspect(decls[r], func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				switch f := call.Fun.(type) {
				case *ast.SelectorExpr:
					if id, ok := f.X.(*ast.Ident); ok && id.Name == "vm" {
						scan[f.Sel.Name] = decls[f.Sel.Name] != nil
					}
				case *ast.Ident:
					scan[f.Name] = decls[f.Name] != nil
				}
			}
			return true
		})
	}
	// checkParam is the one place that turns a declaration into Lua's
	// argument error.
	delete(scan, "checkParam")
	found := map[string]string{}
	for name, ok := range scan {
		if !ok {
			continue
		}
		ast.Inspect(decls[name], func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				m := sel.Sel.Name
				if strings.HasPrefix(m, "Check") || m == "ArgError" || m == "TypeError" {
					found[name] = fset.Position(call.Pos()).String()
				}
			}
			for _, a := range call.Args {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(lit.Value, "got %s") {
					found[name] = fset.Position(call.Pos()).String()
				}
			}
			return true
		})
	}
	return found
}
