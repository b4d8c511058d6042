package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/forge-lsp/forge-lsp/"

// goList returns, for each package matching pattern (dependencies
// included when deps is set), its import path and its imports.
func goList(t *testing.T, deps bool, pattern string) map[string][]string {
	t.Helper()
	args := []string{"list"}
	if deps {
		args = append(args, "-deps")
	}
	args = append(args, "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, pattern)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	pkgs := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			pkgs[f[0]] = f[1:]
		}
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %s printed nothing", pattern)
	}
	return pkgs
}

// TestMCPLinksNoCLI: the MCP server reuses the shared findings, test
// runner and run policy, never the command line's package
// (docs/architecture.md#layers).
func TestMCPLinksNoCLI(t *testing.T) {
	for p := range goList(t, true, module+"cmd/forge-lsp/internal/mcp") {
		if p == module+"cmd/forge-lsp/internal/cli" {
			t.Errorf("cmd/forge-lsp/internal/mcp links %s; move what both need into a shared package under cmd/internal", p)
		}
	}
}

// TestRunReadsNoEnvironment: engine/run receives a resolved gateway
// client (or a Connect function) from its host; the run policy, the
// environment included, is engine/session's. A run package that imports
// os or syscall could read the environment.
func TestRunReadsNoEnvironment(t *testing.T) {
	pkgs := goList(t, false, module+"engine/run")
	for _, imp := range pkgs[module+"engine/run"] {
		if imp == "os" || imp == "syscall" {
			t.Errorf("engine/run imports %s; let engine/session read the environment and pass the result in run.Config", imp)
		}
	}
}

// TestNoSideEffectImports: the in-process gateway (engine/gatewayd) is
// wired explicitly (engine/session passes gatewayd.OpenFile), so no
// file imports it, or any package of this module, only for its init.
func TestNoSideEffectImports(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "editors") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if imp.Name != nil && imp.Name.Name == "_" && strings.HasPrefix(p, module) {
				t.Errorf("%s: blank import of %s; call what you need from it explicitly", fset.Position(imp.Pos()), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("walked only %d Go files under %s", n, root)
	}
}
