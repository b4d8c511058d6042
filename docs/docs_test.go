package docs

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

var update = flag.Bool("update", false, "rewrite the generated parts of language.md and architecture.md")

// replaceBlock returns doc with the text between the lines holding begin
// and end replaced by body. It fails the test when the markers are missing.
func replaceBlock(t *testing.T, name, doc, begin, end, body string) string {
	t.Helper()
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: markers %q ... %q not found", name, begin, end)
	}
	i += strings.IndexByte(doc[i:], '\n') + 1
	return doc[:i] + body + doc[j:]
}

// checkGenerated compares file with want, or rewrites it under -update.
func checkGenerated(t *testing.T, file, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date; run `go generate ./docs` (diff at line %d)", file, firstDiffLine(got, want))
}

func firstDiffLine(a, b string) int {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range la {
		if i >= len(lb) || la[i] != lb[i] {
			return i + 1
		}
	}
	return len(la) + 1
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLanguageAPI keeps the API reference of language.md equal to the
// engine/api table: an entry added to engine/api without documentation,
// or a stale row, fails here.
func TestLanguageAPI(t *testing.T) {
	const file = "language.md"
	doc := read(t, file)
	want := replaceBlock(t, file, doc, "<!-- BEGIN API REFERENCE", "<!-- END API REFERENCE -->", apiTable())
	checkGenerated(t, file, doc, want)
}

func apiTable() string {
	var b strings.Builder
	b.WriteString("| Name | Signature | Works in | What it does |\n|---|---|---|---|\n")
	for _, e := range api.All() {
		if !e.Host {
			continue
		}
		name := "`" + e.Name + "`"
		for _, s := range e.Synonyms {
			name += " (also `" + s + "`)"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", name, cell(e.Signature), where(e), cell(e.Doc))
	}
	return b.String()
}

// where says where an entry works, where it raises and where it is nil.
func where(e *api.Entry) string {
	s := "everywhere"
	if e.Allowed != api.Anywhere {
		s = contexts(e.Allowed)
	}
	if fails := e.Defined &^ e.Allowed; fails != 0 {
		s += "; raises in " + contexts(fails)
	}
	if absent := api.Anywhere &^ e.Defined; absent != 0 {
		s += "; nil in " + contexts(absent)
	}
	return s
}

// contexts names a set of contexts, "sections" standing for every context
// that runs in a section VM (section chunks, handlers, the shared library).
func contexts(w api.Where) string {
	if w&api.SectionLike != api.SectionLike {
		return w.String()
	}
	if w&api.H1 != 0 {
		return "H1, sections"
	}
	return "sections"
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped (except - and _), spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headings returns the level and text of each Markdown heading outside
// fenced code blocks.
func headings(doc string) (levels []int, texts []string) {
	fence := ""
	for _, line := range strings.Split(doc, "\n") {
		trim := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trim, fence) && strings.Trim(trim, string(fence[0])) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			n := len(trim) - len(strings.TrimLeft(trim, string(trim[0])))
			// A backtick fence's info string cannot hold a backtick:
			// "```` ```lua ```` fences" is a code span, not a fence.
			if trim[0] != '`' || !strings.Contains(trim[n:], "`") {
				fence = trim[:n]
				continue
			}
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		n := len(line) - len(strings.TrimLeft(line, "#"))
		if n > 6 || n == len(line) || line[n] != ' ' {
			continue
		}
		levels = append(levels, n)
		texts = append(texts, strings.TrimSpace(line[n:]))
	}
	return levels, texts
}

// anchors returns the set of heading anchors of a Markdown document, with
// GitHub's -1, -2 suffixes for repeats.
func anchors(doc string) (map[string]bool, []string) {
	_, texts := headings(doc)
	set := map[string]bool{}
	var dups []string
	count := map[string]int{}
	for _, h := range texts {
		s := slug(h)
		if n := count[s]; n > 0 {
			dups = append(dups, h)
			set[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			set[s] = true
		}
		count[s]++
	}
	return set, dups
}

// moduleRoot is the repository root (the folder above docs/).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var citeRe = regexp.MustCompile(`docs/([a-z-]+\.md)#([A-Za-z0-9_-]+)`)
var linkRe = regexp.MustCompile(`\]\(([A-Za-z0-9_./-]*\.md)?#([A-Za-z0-9_-]+)\)`)

// TestAnchors checks that every `docs/X.md#anchor` cited anywhere in the
// repository, and every Markdown link with a fragment in a Markdown file,
// names a heading that exists, and that language.md and architecture.md
// have no two headings with the same anchor (anchors must stay stable).
func TestAnchors(t *testing.T) {
	root := moduleRoot(t)
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := cache[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			cache[path] = nil
			return nil
		}
		a, _ := anchors(string(b))
		cache[path] = a
		return a
	}
	for _, f := range []string{"language.md", "architecture.md"} {
		if _, dups := anchors(read(t, f)); len(dups) > 0 {
			t.Errorf("%s: headings with a repeated anchor: %q", f, dups)
		}
	}
	checked := 0
	exts := []string{".go", ".md", ".txtar", ".ts", ".lua", ".json", ".yaml", ".yml", ".golden", ""}
	err := walkRepoText(root, exts, []string{".ci"}, func(path, rel string, lines []string) {
		for i, line := range lines {
			for _, m := range citeRe.FindAllStringSubmatch(line, -1) {
				checked++
				target := filepath.Join(root, "docs", m[1])
				if a := anchorsOf(target); a == nil {
					t.Errorf("%s:%d: cites docs/%s, which does not exist", rel, i+1, m[1])
				} else if !a[m[2]] {
					t.Errorf("%s:%d: docs/%s has no heading with anchor #%s", rel, i+1, m[1], m[2])
				}
			}
			if filepath.Ext(path) != ".md" {
				continue
			}
			for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
				target := path
				if m[1] != "" {
					target = filepath.Join(filepath.Dir(path), m[1])
				}
				checked++
				if a := anchorsOf(target); a == nil {
					t.Errorf("%s:%d: link to %s, which does not exist", rel, i+1, m[1])
				} else if !a[m[2]] {
					t.Errorf("%s:%d: %s has no heading with anchor #%s", rel, i+1, filepath.Base(target), m[2])
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no citation found; is the walk broken?")
	}
}

// walkRepoText calls f with the lines of each file under root whose
// extension is one of exts ("" for none), and its path relative to root.
// Folders named node_modules or out and hidden ones other than
// keepHidden are skipped.
func walkRepoText(root string, exts, keepHidden []string, f func(path, rel string, lines []string)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") && !slices.Contains(keepHidden, n) || n == "node_modules" || n == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(exts, filepath.Ext(path)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		f(path, rel, strings.Split(string(b), "\n"))
		return nil
	})
}

// goCmd finds the go command that runs the tests.
func goCmd() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// pkg is one package of the module, as the graph shows it.
type pkg struct {
	path    string // relative to the module, e.g. "engine/parse"
	imports map[string]bool
}

// modulePackages lists the module's packages and their in-module imports
// (tests excluded). Packages under analysis/passes/ are folded into one
// node, analysis/passes/*, so that adding an analyzer changes no graph.
func modulePackages(t *testing.T) []*pkg {
	t.Helper()
	root := moduleRoot(t)
	run := func(args ...string) string {
		cmd := exec.Command(goCmd(), args...)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	mod := strings.TrimSpace(run("list", "-m"))
	out := run("list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	fold := func(p string) string {
		p = strings.TrimPrefix(strings.TrimPrefix(p, mod), "/")
		if p == "" {
			return "."
		}
		if strings.HasPrefix(p, "analysis/passes/") {
			return "analysis/passes/*"
		}
		return p
	}
	byPath := map[string]*pkg{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p := fold(f[0])
		n := byPath[p]
		if n == nil {
			n = &pkg{path: p, imports: map[string]bool{}}
			byPath[p] = n
		}
		for _, imp := range f[1:] {
			if imp == mod || strings.HasPrefix(imp, mod+"/") {
				if q := fold(imp); q != p {
					n.imports[q] = true
				}
			}
		}
	}
	var list []*pkg
	for _, n := range byPath {
		list = append(list, n)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].path < list[j].path })
	return list
}

func nodeID(p string) string {
	return "p_" + strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, p)
}

// graph renders the packages as a Mermaid flowchart grouped by top-level
// folder, followed by the same edges as a plain list.
func graph(pkgs []*pkg) string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	groups := map[string][]*pkg{}
	var order []string
	for _, p := range pkgs {
		g := strings.SplitN(p.path, "/", 2)[0]
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], p)
	}
	for _, g := range order {
		fmt.Fprintf(&b, "  subgraph %s [%s]\n", "g_"+nodeID(g)[2:], g)
		for _, p := range groups[g] {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", nodeID(p.path), p.path)
		}
		b.WriteString("  end\n")
	}
	for _, p := range pkgs {
		for _, q := range sortedKeys(p.imports) {
			fmt.Fprintf(&b, "  %s --> %s\n", nodeID(p.path), nodeID(q))
		}
	}
	b.WriteString("```\n\n| Package | Imports (inside the module) |\n|---|---|\n")
	for _, p := range pkgs {
		var deps []string
		for _, q := range sortedKeys(p.imports) {
			deps = append(deps, "`"+q+"`")
		}
		d := strings.Join(deps, ", ")
		if d == "" {
			d = "none"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", p.path, d)
	}
	return b.String()
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestArchitecture regenerates the package graph of architecture.md from
// `go list` and compares it, and checks that the Packages section has one
// paragraph per package of the graph and none for a package that is gone.
func TestArchitecture(t *testing.T) {
	const file = "architecture.md"
	pkgs := modulePackages(t)
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	doc := read(t, file)
	want := replaceBlock(t, file, doc, "<!-- BEGIN PACKAGE GRAPH", "<!-- END PACKAGE GRAPH -->", graph(pkgs))
	checkGenerated(t, file, doc, want)

	described := packageParagraphs(t, doc)
	for _, p := range pkgs {
		if !described[p.path] {
			t.Errorf("%s: package %s has no paragraph under \"## Packages\": add a `### %s` heading and say what it owns", file, p.path, p.path)
		}
		delete(described, p.path)
	}
	for p := range described {
		t.Errorf("%s: \"## Packages\" describes %s, which is not a package of the module any more", file, p)
	}
}

// packageParagraphs returns the packages named by "### `path`" headings
// under "## Packages" that are followed by a paragraph.
func packageParagraphs(t *testing.T, doc string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	in := false
	lines := strings.Split(doc, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line[3:]) == "Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "### ") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(line[4:]), "`")
		text := ""
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(l, "#") {
				break
			}
			text += strings.TrimSpace(l)
		}
		if len(text) < 40 {
			t.Errorf("architecture.md: the paragraph of %s is missing or too short", name)
		}
		out[name] = true
	}
	return out
}

// TestLanguageExamples checks the whole-prompt examples of language.md
// (```` ````markdown ```` blocks that start with frontmatter): each must
// parse and pass the checker without an error.
func TestLanguageExamples(t *testing.T) {
	lines := strings.Split(read(t, "language.md"), "\n")
	found := 0
	for i := 0; i < len(lines); i++ {
		if lines[i] != "````markdown" {
			continue
		}
		start := i + 1
		j := start
		for j < len(lines) && lines[j] != "````" {
			j++
		}
		body := strings.Join(lines[start:j], "\n") + "\n"
		i = j
		if !strings.HasPrefix(body, "---\n") {
			continue
		}
		found++
		name := fmt.Sprintf("language.md:%d", start+1)
		p := parse.Parse(name, []byte(body))
		for _, d := range checker.Check(p, nil) {
			if d.Severity == analysis.Error {
				t.Errorf("%s: example fails the checker: %s [%s]", name, d.Message, d.Code)
			}
		}
	}
	if found < 2 {
		t.Fatalf("found %d whole-prompt examples in language.md, want at least 2", found)
	}
}

var (
	benchRe = regexp.MustCompile(`(?m)^func (Benchmark\w+)\(\w+ \*testing\.B\)`)
	fuzzRe  = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
)

// testFuncs maps each package folder (relative to the module root) to the
// names of the test functions re matches in its _test.go files.
func testFuncs(t *testing.T, re *regexp.Regexp) map[string][]string {
	t.Helper()
	root := moduleRoot(t)
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			out[dir] = append(out[dir], m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// TestContributing keeps the benchmark and fuzz-target tables of
// CONTRIBUTING.md equal to the Benchmark and Fuzz functions in the tree.
func TestContributing(t *testing.T) {
	const file = "../CONTRIBUTING.md"
	doc := read(t, file)

	var b strings.Builder
	b.WriteString("| Package | Benchmarks | Command |\n|---|---|---|\n")
	benches := testFuncs(t, benchRe)
	for _, dir := range sortedKeys(toSet(benches)) {
		fmt.Fprintf(&b, "| `%s` | %s | `go test -run '^$' -bench . -count 3 ./%s` |\n", dir, codeList(benches[dir]), dir)
	}
	want := replaceBlock(t, file, doc, "<!-- BEGIN BENCHMARKS", "<!-- END BENCHMARKS -->", b.String())

	b.Reset()
	b.WriteString("| Package | Targets | Command for the first |\n|---|---|---|\n")
	fuzz := testFuncs(t, fuzzRe)
	for _, dir := range sortedKeys(toSet(fuzz)) {
		fmt.Fprintf(&b, "| `%s` | %s | `go test -run '^$' -fuzz '^%s$' -fuzztime 60s -parallel 1 ./%s` |\n", dir, codeList(fuzz[dir]), fuzz[dir][0], dir)
	}
	want = replaceBlock(t, file, want, "<!-- BEGIN FUZZ TARGETS", "<!-- END FUZZ TARGETS -->", b.String())
	if len(benches) == 0 || len(fuzz) == 0 {
		t.Fatalf("found %d benchmark and %d fuzz packages; is the walk broken?", len(benches), len(fuzz))
	}
	checkGenerated(t, file, doc, want)
}

func toSet(m map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func codeList(names []string) string {
	var q []string
	for _, n := range names {
		q = append(q, "`"+n+"`")
	}
	return strings.Join(q, ", ")
}

// TestNoOutsideReferences keeps the repository self-contained: no file may
// cite sections of specification files that are not in the repository, or
// paths outside it. Cite docs/language.md#<anchor> instead. The patterns
// are assembled so that this file does not match itself.
func TestNoOutsideReferences(t *testing.T) {
	root := moduleRoot(t)
	banned := []string{
		"\u00a7",          // "section 4.2" style citations
		"runtime" + ".md", // specification files kept outside the repository
		"prompt-format" + ".md",
		"decisions" + ".md",
		"../" + "shared", // the checkout's sibling folder
		"/" + "work/",    // a machine path
	}
	exts := []string{".go", ".md", ".txtar", ".ts", ".mjs", ".lua", ".vim", ".json", ".yaml", ".yml", ".golden", ".sh", ""}
	err := walkRepoText(root, exts, []string{".ci", ".github"}, func(_, rel string, lines []string) {
		for i, line := range lines {
			for _, s := range banned {
				if strings.Contains(line, s) {
					t.Errorf("%s:%d: refers to %q, which is outside the repository; cite docs/language.md#<anchor> or state the rule", rel, i+1, s)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
