package checker_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
	"golang.org/x/tools/txtar"
)

// The differential test runs every prompt of the repository's testdata
// (and mutations of each) through both `check` and the engine, and holds
// the checker to its severity policy (docs/codes.md):
//
//   - false alarm: an error finding at a line the run reached without
//     failing there;
//   - miss: a run failure that needs no model output (no model round came
//     before it, and it depends on no catalog, network or budget) with no
//     error finding at its line.
//
// A finding is excused when the run was refused (parse or version), when
// its section was never entered, or when the run failed earlier in the
// same section or in a way that depends on the environment. The model
// gateway is scripted (engine/gateway/gatewaytest): every completion
// answers "ok". Known disagreements are listed with their reasons in
// testdata/differential-allow.txt; the test fails on any other, and on an
// allowlist entry that no longer matches anything.

// sample is one prompt to compare.
type sample struct {
	id    string
	src   []byte
	input string
}

func corpus(t *testing.T) []sample {
	t.Helper()
	root := filepath.Join("..", "..")
	var out []sample
	add := func(id string, src []byte, input string) {
		out = append(out, sample{id: filepath.ToSlash(id), src: src, input: input})
	}
	for _, dir := range []string{"testdata", "examples", "analysis"} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case strings.HasSuffix(p, ".md") && strings.Contains(filepath.ToSlash(rel), "testdata/") || dir == "examples" && strings.HasSuffix(p, ".md"):
				if filepath.Base(p) == "README.md" {
					return nil
				}
				b, err := os.ReadFile(p)
				if err == nil {
					add(rel, b, "the input")
				}
			case strings.HasSuffix(p, ".txtar") && (strings.Contains(rel, "testdata"+string(filepath.Separator)+"run") || strings.Contains(rel, "testdata"+string(filepath.Separator)+"parse")):
				a, err := txtar.ParseFile(p)
				if err != nil {
					return nil
				}
				var src []byte
				input := "the input"
				for _, f := range a.Files {
					switch f.Name {
					case "prompt.md":
						src = f.Data
					case "input":
						input = strings.TrimSuffix(string(f.Data), "\n")
					}
				}
				if src != nil {
					add(rel, src, input)
				}
			}
			return nil
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Mutations. Each is deterministic, so a mutant's id names it stably.
var (
	headingRE = regexp.MustCompile(`(?m)^#{2,6} .*\n`)
	swapRE    = regexp.MustCompile(`\b(fanout|execute|store\.write|store\.read|log|jump|list_from_section|tools\.add|models\.use)\(("[^"\n]*"|[A-Za-z_][A-Za-z0-9_.]*), ("[^"\n]*"|[A-Za-z_][A-Za-z0-9_.]*|\{[^{}\n]*\})`)
	tableRE   = regexp.MustCompile(`\{[^{}\n]*[^{}\s][^{}\n]*\}`)
	listRE    = regexp.MustCompile(`list_from_section\("[^"\n]*"\)`)
	fenceRE   = regexp.MustCompile("(?m)^```lua\n")
	sectionRE = regexp.MustCompile(`(?m)^(#{2,6}) (.+)$`)
	defaultRE = regexp.MustCompile(`(?m)^.*models\.default\(.*\n`)
	// bindRE finds a literal tool capability (group 1 ends before it).
	bindRE = regexp.MustCompile(`(tools\.(?:bind|need)\("[^"\n]*", )"[^"\n]*"`)
)

func mutants(s sample) []sample {
	src := string(s.src)
	var out []sample
	add := func(name, text string) {
		if text != src {
			out = append(out, sample{id: s.id + "#" + name, src: []byte(text), input: s.input})
		}
	}
	// Delete a heading (up to three).
	for i, m := range headingRE.FindAllStringIndex(src, 3) {
		add(fmt.Sprintf("del-heading-%d", i+1), src[:m[0]]+src[m[1]:])
	}
	// Swap the first two arguments of a call (up to two).
	for i, m := range swapRE.FindAllStringSubmatchIndex(src, 2) {
		a, b := src[m[4]:m[5]], src[m[6]:m[7]]
		add(fmt.Sprintf("swap-args-%d", i+1), src[:m[4]]+b+", "+a+src[m[7]:])
	}
	// Insert a jump to another section at the start of a Lua block (up to
	// two blocks, each jumping to the first heading at its level that is
	// not its own).
	heads := sectionRE.FindAllStringSubmatchIndex(src, -1)
	fences := fenceRE.FindAllStringIndex(src, -1)
	n := 0
	for _, f := range fences {
		if n == 2 {
			break
		}
		// The section this fence is in.
		own := -1
		for i, h := range heads {
			if h[0] < f[0] {
				own = i
			}
		}
		if own < 0 {
			continue
		}
		level := src[heads[own][2]:heads[own][3]]
		for i, h := range heads {
			if i != own && src[h[2]:h[3]] == level {
				n++
				target := level + " " + src[h[4]:h[5]]
				add(fmt.Sprintf("jump-%d", n), src[:f[1]]+fmt.Sprintf("jump(%q)\n", target)+src[f[1]:])
				break
			}
		}
	}
	// Empty the table literals; turn list reads into a string or an empty
	// table; drop the default model.
	add("empty-tables", inLua(src, func(code string) string { return tableRE.ReplaceAllString(code, "{}") }))
	add("list-empty", listRE.ReplaceAllString(src, "{}"))
	add("list-string", listRE.ReplaceAllString(src, `"alpha"`))
	add("no-default", defaultRE.ReplaceAllString(src, ""))
	// Capabilities the default catalog cannot bind: nothing matches, two
	// tools match about equally.
	if m := bindRE.FindStringSubmatchIndex(src); m != nil {
		add("bind-absent", src[:m[3]]+`"send an email to the team"`+src[m[1]:])
		add("bind-ambiguous", src[:m[3]]+`"search or fetch the web"`+src[m[1]:])
	}
	// Statically known run failures in the first section Lua block.
	for _, f := range fences {
		if f[0] > 0 && len(heads) > 0 && f[0] > heads[0][0] {
			add("log-newline", src[:f[1]]+"log(\"one\\ntwo\")\n"+src[f[1]:])
			add("read-unwritten", src[:f[1]]+"local never = store.read(\"never/written.md\")\n"+src[f[1]:])
			add("bad-path", src[:f[1]]+"store.write(\"a\\\\b.md\", \"x\")\n"+src[f[1]:])
			add("var-function", src[:f[1]]+"var.f = function() end\n"+src[f[1]:])
			// own is the heading of the block's section, for the
			// mutants whose section jumps back to it.
			own := ""
			for _, h := range heads {
				if h[0] < f[0] {
					own = src[h[2]:h[3]] + " " + src[h[4]:h[5]]
				}
			}
			for _, m := range classMutants {
				if strings.Contains(m.section, "%s") && !strings.HasPrefix(own, "## ") {
					continue // a jump back from a top-level section
				}
				text := src[:f[1]] + m.code + src[f[1]:]
				if m.section != "" {
					text += "\n" + strings.ReplaceAll(m.section, "%s", own)
				}
				add(m.name, text)
			}
			// The distance transform: failing values of the classes
			// above, created one to three steps away from their use.
			for _, d := range distanceMutants(s.id, src, f[1]) {
				add(d.name, d.text)
			}
			break
		}
	}
	// Control transfers through pcall (class 6): a pcall(jump, ...) where
	// the jump mutants put a jump. Only in prompts without execute or
	// fanout, where the pcall could also catch a nested chain's failure
	// and go on (a run the checker cannot predict).
	n = 0
	if strings.Contains(src, "execute") || strings.Contains(src, "fanout") {
		n = 2
	}
	for _, f := range fences {
		if n == 2 {
			break
		}
		own := -1
		for i, h := range heads {
			if h[0] < f[0] {
				own = i
			}
		}
		if own < 0 {
			continue
		}
		level := src[heads[own][2]:heads[own][3]]
		for i, h := range heads {
			if i != own && src[h[2]:h[3]] == level {
				n++
				target := level + " " + src[h[4]:h[5]]
				add(fmt.Sprintf("pcall-jump-%d", n), src[:f[1]]+fmt.Sprintf("pcall(jump, %q)\n", target)+src[f[1]:])
				break
			}
		}
	}
	return out
}

// classMutant is a statically known run failure whose value reaches the
// failing call through something other than a literal at the call site
// (the classes of docs/codes.md#bad-argument, #bad-operand,
// #unset-var-key and #sys-out-of-context): code inserted at the start of
// the first section Lua block, and a section appended to the prompt.
type classMutant struct {
	class, name, code, section string
}

var classMutants = []classMutant{
	// 1: values through locals and expressions.
	{"1-locals", "local-log-newline", "local msg = \"one\\ntwo\"\nlog(msg)\n", ""},
	{"1-locals", "local-concat-nil", "local suffix = nil\nlocal title = \"Report: \" .. args .. suffix\n", ""},
	{"1-locals", "local-read-range", "store.write(\"mut.txt\", \"a\\nb\")\nlocal n = 0\nlocal head = store.read(\"mut.txt\", n, 1)\n", ""},
	{"1-locals", "rep-log", "local rule = string.rep(\"=\", 300)\nlog(rule)\n", ""},
	{"1-locals", "local-anchor", "store.write(\"mut.txt\", \"a\")\nlocal anchor = \"\"\nstore.str_replace(\"mut.txt\", anchor, \"b\")\n", ""},
	// 2: types that are not literals.
	{"2-types", "table-untrusted", "local page = {title = \"t\"}\nlocal safe = untrusted(page)\n", ""},
	{"2-types", "fanout-function", "local arms = fanout(\"## Mut worker\", {\"a\", tostring})\n", mutWorker},
	{"2-types", "execute-table", "local input = {1}\nlocal out = execute(\"## Mut worker\", input)\n", mutWorker},
	// 3: var in walk order, with the copy rules of chains and arms.
	{"3-var", "var-later", "log(\"v: \" .. var.mut_later)\n", "## Mut later\n\n```lua\nvar.mut_later = \"x\"\n```\n"},
	{"3-var", "var-chain", "local r = execute(\"## Mut chain\")\nlog(\"v: \" .. var.mut_chain)\n", "## Mut chain\n\n---\n\n```lua\nvar.mut_chain = \"x\"\nreturn \"ok\"\n```\n"},
	// A later section that jumps back: the write comes around the
	// cycle, after the section's first run (%s is the section's heading).
	{"3-var", "var-cycle", "log(\"v: \" .. var.mut_cycle)\n", "## Mut cycle\n\n```lua\nvar.mut_cycle = \"x\"\nif args == \"mut-cycle\" then jump(\"%s\") end\n```\n"},
	{"3-var", "var-arm", "local rs = fanout(\"## Mut arm\", {\"a\"})\nlog(\"v: \" .. var.mut_arm)\n", "## Mut arm\n\n---\n\n```lua\nvar.mut_arm = \"x\"\nreturn \"ok\"\n```\n"},
	// 4: the store as data.
	{"4-store", "anchor-twice", "store.write(\"mut.txt\", \"a a\")\nstore.str_replace(\"mut.txt\", \"a\", \"b\")\n", ""},
	// 5: sys by context.
	{"5-sys", "sys-index", "log(\"i: \" .. sys.index)\n", ""},
}

// mutWorker is an off-walk worker section for the mutants that call one.
const mutWorker = "## Mut worker\n\n---\n\n```lua\nreturn \"w\"\n```\n"

// mutantClass returns the class of a mutant id, for the counts.
func mutantClass(id string) string {
	_, name, ok := strings.Cut(id, "#")
	if !ok {
		return ""
	}
	if strings.HasPrefix(name, "pcall-jump-") {
		return "6-pcall"
	}
	if rest, ok := strings.CutPrefix(name, "distance-"); ok {
		for _, tr := range distanceTransforms {
			if v, ok := strings.CutPrefix(rest, tr+"-"); ok {
				for _, d := range distanceValues {
					if d.name == v {
						return "7-distance/" + tr + "/" + d.class
					}
				}
			}
		}
	}
	for _, m := range classMutants {
		if m.name == name {
			return m.class
		}
	}
	return "other"
}

// inLua applies f to the text of each ```lua fence.
func inLua(src string, f func(string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(src, "```lua\n")
		if i < 0 {
			b.WriteString(src)
			return b.String()
		}
		i += len("```lua\n")
		j := strings.Index(src[i:], "\n```")
		if j < 0 {
			b.WriteString(src)
			return b.String()
		}
		b.WriteString(src[:i])
		b.WriteString(f(src[i : i+j]))
		src = src[i+j:]
	}
}

// verdict is what the engine did with a sample.
type verdict struct {
	refused bool
	err     *run.RunError
	// static is true when the failure needs no model output and depends
	// on nothing outside the prompt.
	static bool
	// entered holds the heading lines of the sections entered (0: H1).
	entered map[int]bool
}

type recorder struct {
	mu      sync.Mutex
	entered map[int]bool
	rounds  int
}

func (r *recorder) SectionEnter(ev run.SectionEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.ID == 0 {
		r.entered[0] = true
	} else {
		r.entered[ev.Line] = true
	}
}
func (r *recorder) SectionExit(run.SectionEvent) {}
func (r *recorder) ModelRound(run.ModelRoundEvent) {
	r.mu.Lock()
	r.rounds++
	r.mu.Unlock()
}
func (r *recorder) ToolCall(run.ToolCallEvent) {}
func (r *recorder) Log(run.LogEvent)           {}

func runSample(srv *gatewaytest.Server, p *parse.Prompt, s sample) verdict {
	if len(p.Errors) > 0 {
		return verdict{refused: true}
	}
	if _, ok := parse.Probe(s.src); !ok {
		return verdict{refused: true}
	}
	rec := &recorder{entered: map[int]bool{}}
	st := store.New()
	// A declared input file is one the user's store holds before the run.
	if fm := p.Frontmatter; fm != nil && fm.Input != nil && fm.Input.Path != "" {
		_ = st.Write(fm.Input.Path, "the input file")
	}
	cfg := run.Config{Input: s.input, Store: st, Observer: rec, Execution: "diff"}
	cfg.Models.Client = gateway.New(srv.Config())
	cfg.Models.Catalog = srv.Catalog
	// The default catalog (web_search and web_fetch), which check resolves
	// capabilities against; no scripted answer calls a tool.
	// A jump cycle fails at the entry cap whatever its value; a lower cap
	// keeps the test fast (jump-cycle findings do not depend on it).
	cfg.Limits.MaxSectionEntries = 100
	cfg.Limits.Instructions = 2_000_000
	// Budgets bound every run; the timeout only guards against a hang, and
	// is generous so that a loaded machine cannot turn a failure into a
	// cancellation.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := run.Run(ctx, p, cfg)
	v := verdict{entered: rec.entered}
	if err == nil {
		return v
	}
	var re *run.RunError
	if !errors.As(err, &re) {
		re = &run.RunError{Kind: run.KindInternal, Msg: err.Error()}
	}
	v.err = re
	switch re.Kind {
	case run.KindParse, run.KindVersion:
		v.refused = true
	case run.KindLua, run.KindSubstitution, run.KindStore:
		// Budgets depend on the run's limits, not on the prompt alone
		// (the H1 reports a budget hit as a Lua error).
		v.static = rec.rounds == 0 && !strings.Contains(re.Msg, "budget exceeded") && !strings.Contains(re.Msg, "quota exceeded")
	case run.KindBinding:
		// Tool bindings resolve against the default catalog, which check
		// knows too.
		v.static = rec.rounds == 0 && (re.Variant == "ModelRequired" || pickerVariants[re.Variant])
	case run.KindQuota:
		v.static = rec.rounds == 0 && re.Variant == "SectionEntries"
	}
	return v
}

// pickerVariants are the binding failures of a tools.bind capability.
var pickerVariants = map[string]bool{"Absent": true, "Ambiguous": true, "Duplicate": true, "BindQuery": true, "ToolIdSelectedTwice": true}

// disagreement is one mismatch, keyed for the allowlist.
type disagreement struct {
	id, kind, code string
	line           int
	msg            string
}

func (d disagreement) String() string {
	return fmt.Sprintf("%s\t%s\t%s\t%d\t%s", d.id, d.kind, d.code, d.line, d.msg)
}

// sectionLineOf returns the heading line of the section containing file
// line l (0 for the H1 region).
func sectionLineOf(p *parse.Prompt, l int) int {
	best := 0
	var walk func([]*parse.Section)
	walk = func(ss []*parse.Section) {
		for _, s := range ss {
			if s.Heading != nil {
				if hl := p.File.Line(s.Heading.Span.Start); hl <= l && hl > best {
					best = hl
				}
			}
			walk(s.Children)
		}
	}
	walk(p.Sections)
	return best
}

// chainLineRE finds the "<label>:<line>:" steps of a nested failure's
// message ("section `Main` prologue:12: section `W` prologue:26: ..."):
// the engine reports the outermost call's line, the last step is where the
// failure happened.
var (
	chainLineRE = regexp.MustCompile("(?:prologue|epilog|lua(?: #\\d+)?|shared):(\\d+): ")
	requiredRE  = regexp.MustCompile("model binding required for section (.+?): ")
)

// failLines returns the file lines a run failure points at.
func failLines(e *run.RunError) map[int]bool {
	out := map[int]bool{}
	if e.Line > 0 {
		out[e.Line] = true
	}
	for _, m := range chainLineRE.FindAllStringSubmatch(e.Msg, -1) {
		var n int
		fmt.Sscan(m[1], &n)
		out[n] = true
	}
	return out
}

func compare(s sample, p *parse.Prompt, diags []analysis.Diagnostic, v verdict) []disagreement {
	var out []disagreement
	if v.refused {
		return nil
	}
	failLine := 0
	fails := map[int]bool{}
	var matched func(d analysis.Diagnostic, a, b int) bool = func(analysis.Diagnostic, int, int) bool { return false }
	if v.err != nil {
		failLine = v.err.Line
		fails = failLines(v.err)
		matched = func(d analysis.Diagnostic, a, b int) bool {
			for l := a; l <= b; l++ {
				if fails[l] {
					return true
				}
			}
			switch {
			case v.err.Kind == run.KindBinding && v.err.Variant == "ModelRequired" && d.Code == "model-required":
				// A nested failure names the section, not the line.
				m := requiredRE.FindStringSubmatch(v.err.Msg)
				return m != nil && strings.Contains(d.Message, "section `"+m[1]+"`")
			case v.err.Kind == run.KindBinding && pickerVariants[v.err.Variant]:
				// A binding failure carries no line; check says what the
				// run says, word for word.
				return d.Code == "tool-binding" && strings.HasPrefix(d.Message, v.err.Msg)
			case v.err.Kind == run.KindQuota && v.err.Variant == "SectionEntries":
				// Where the cap trips depends on the cap; the cycle is the
				// finding. A fanout recursion multiplies its entries at
				// every level, so it trips the entry cap before the
				// nesting cap.
				return d.Code == "jump-cycle" || d.Code == "nested-recursion" && strings.HasPrefix(d.Message, "fanout ")
			}
			return false
		}
		if inShared(p, failLine) {
			return nil // the shared library fails every section at its load
		}
	}
	found := false
	for _, d := range diags {
		if d.Severity != analysis.Error {
			continue
		}
		a, b := p.File.Line(d.Span.Start), p.File.Line(d.Span.End)
		if matched(d, a, b) || matchedRelated(p, d, matched) {
			found = true
			continue
		}
		sec := sectionLineOf(p, a)
		if inShared(p, a) {
			// The shared library loads only into section VMs.
			sec = -1
			for l := range v.entered {
				if l != 0 {
					sec = l
				}
			}
		}
		if !v.entered[sec] {
			continue // never reached in this run
		}
		if v.err != nil {
			if !v.static || failLine == 0 {
				continue // the run stopped in a way the checker cannot know
			}
			if sectionLineOf(p, failLine) == sec && a > failLine {
				continue // after the failure, in the failing section
			}
		}
		out = append(out, disagreement{id: s.id, kind: "false", code: d.Code, line: a, msg: d.Message})
	}
	if v.err != nil && v.static && len(fails)+boolInt(v.err.Variant == "ModelRequired" || v.err.Variant == "SectionEntries" || v.err.Kind == run.KindBinding && pickerVariants[v.err.Variant]) > 0 && !found {
		out = append(out, disagreement{id: s.id, kind: "missed", code: v.err.Kind.String(), line: failLine, msg: v.err.Msg})
	}
	return out
}

// matchedRelated reports whether a related location of finding d (the
// failing call in a helper a finding at its call site names, the call a
// finding about one of its arguments is in) is where the run failed.
func matchedRelated(p *parse.Prompt, d analysis.Diagnostic, matched func(analysis.Diagnostic, int, int) bool) bool {
	for _, r := range d.Related {
		if matched(d, p.File.Line(r.Span.Start), p.File.Line(r.Span.End)) {
			return true
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inShared reports whether file line l is in the shared library chunk.
func inShared(p *parse.Prompt, l int) bool {
	if p.Shared == nil || l == 0 {
		return false
	}
	return l >= p.File.Line(p.Shared.Span.Start) && l <= p.File.Line(p.Shared.Span.End)
}

// allowEntry is one line of the allowlist: an id pattern (path.Match),
// a kind (false or missed), a code (or *), a line (or *), and the reason.
type allowEntry struct {
	id, kind, code, line, reason string
	used                         bool
}

func loadAllow(t *testing.T) []*allowEntry {
	f, err := os.Open(filepath.Join("testdata", "differential-allow.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*allowEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 5)
		if len(parts) != 5 || strings.TrimSpace(parts[4]) == "" {
			t.Fatalf("differential-allow.txt:%d: want id<TAB>kind<TAB>code<TAB>line<TAB>reason", n)
		}
		out = append(out, &allowEntry{id: parts[0], kind: parts[1], code: parts[2], line: parts[3], reason: parts[4]})
	}
	return out
}

func (e *allowEntry) match(d disagreement) bool {
	if ok, _ := path.Match(e.id, d.id); !ok {
		return false
	}
	return e.kind == d.kind && (e.code == "*" || e.code == d.code) && (e.line == "*" || e.line == fmt.Sprint(d.line))
}

func TestDifferential(t *testing.T) {
	base := corpus(t)
	if len(base) < 50 {
		t.Fatalf("corpus has only %d prompts", len(base))
	}
	var samples []sample
	for _, s := range base {
		samples = append(samples, s)
		samples = append(samples, mutants(s)...)
	}
	if !testflag.Long() {
		// Every base prompt, and every fourth mutant.
		var short []sample
		for i, s := range samples {
			if !strings.Contains(s.id, "#") || i%4 == 0 {
				short = append(short, s)
			}
		}
		samples = short
	}
	// FORGE_DIFF_ONLY=<id prefix> compares only those samples (to look
	// at a few disagreements; the allowlist is then not checked for
	// entries that match nothing).
	only := os.Getenv("FORGE_DIFF_ONLY")
	if only != "" {
		var some []sample
		for _, s := range samples {
			if strings.HasPrefix(s.id, only) {
				some = append(some, s)
			}
		}
		samples = some
	}
	srv := gatewaytest.New(t, "diff-key")
	srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("ok") }
	allow := loadAllow(t)
	var found []disagreement
	for _, s := range samples {
		p := parse.Parse("prompt.md", s.src)
		diags := checker.Check(p, nil)
		t0 := time.Now()
		v := runSample(srv, p, s)
		if d := time.Since(t0); d > 50*time.Millisecond && os.Getenv("FORGE_DIFF_SLOW") != "" {
			t.Logf("slow: %s %v", s.id, d)
		}
		if s.id == os.Getenv("FORGE_DIFF_ID") {
			t.Logf("%s:\n%s\nverdict: refused=%v static=%v err=%+v entered=%v", s.id, s.src, v.refused, v.static, v.err, v.entered)
			for _, d := range diags {
				t.Logf("finding %d: %s %s %s", p.File.Line(d.Span.Start), d.Severity, d.Code, d.Message)
			}
		}
		found = append(found, compare(s, p, diags, v)...)
	}
	mutantsN := len(samples) - len(base)
	t.Logf("%d prompts, %d mutants, %d allowlist entries", len(base), mutantsN, len(allow))
	perClass := map[string]int{}
	for _, s := range samples {
		if c := mutantClass(s.id); c != "" {
			perClass[c]++
		}
	}
	classes := make([]string, 0, len(perClass))
	for c := range perClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("mutants of class %s: %d", c, perClass[c])
	}
	for _, d := range found {
		ok := false
		for _, e := range allow {
			if e.match(d) {
				e.used = true
				ok = true
			}
		}
		if !ok {
			t.Errorf("disagreement: %s", d)
		}
	}
	if only != "" {
		for _, e := range allow {
			if e.used {
				t.Logf("allowlist entry used: %s %s %s %s", e.id, e.kind, e.code, e.line)
			}
		}
	}
	if testflag.Long() && only == "" {
		for _, e := range allow {
			if !e.used && !strings.HasPrefix(e.reason, "scheduling:") {
				t.Errorf("allowlist entry matches nothing (remove it): %s %s %s %s", e.id, e.kind, e.code, e.line)
			}
		}
	}
}
