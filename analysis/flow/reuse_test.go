package flow

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
)

// keystrokes returns edits of text as an editor makes them while one
// types, each on one line: a space at its end, a Lua comment at its end,
// the line commented out, a letter typed at the end of its first string
// (a section target, a store path, a value a later chunk reads), and
// its first digit changed (a loop bound, a value written to var).
func keystrokes(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	digit, str := regexp.MustCompile(`[0-9]`), regexp.MustCompile(`"[^"]*"`)
	var out []string
	edit := func(i int, l string) {
		out = append(out, strings.Join(lines[:i], "")+l+strings.Join(lines[i+1:], ""))
	}
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		edit(i, body+" "+nlIf(nl))
		edit(i, body+" -- typed"+nlIf(nl))
		edit(i, "-- "+body+nlIf(nl))
		if loc := str.FindStringIndex(body); loc != nil {
			edit(i, body[:loc[1]-1]+"x"+body[loc[1]-1:]+nlIf(nl))
		}
		if loc := digit.FindStringIndex(body); loc != nil {
			d := body[loc[0]]
			edit(i, body[:loc[0]]+string("1234567890"[d-'0'])+body[loc[1]:]+nlIf(nl))
		}
	}
	return out
}

func nlIf(nl bool) string {
	if nl {
		return "\n"
	}
	return ""
}

// dumpAll is dump with what the walk hands the var and store flow (its
// targets and edges) and what those answer.
func dumpAll(r *Result) string {
	var b strings.Builder
	b.WriteString(dump(r))
	prog := r.Prog
	sec := func(s *parse.Section) string {
		if s == nil {
			return "-"
		}
		return s.Address()
	}
	call := func(c *program.Call) string {
		if c == nil {
			return "-"
		}
		return fmt.Sprint(prog.CallSpan(c))
	}
	for n, sp := range r.targets.span {
		for _, t := range r.targets.of(n) {
			fmt.Fprintf(&b, "target %d %s %s sure=%v mayOnly=%v %s\n", n, t.kind, sec(t.sec), t.sure, t.mayOnly, call(t.call))
		}
		_ = sp
	}
	for n, ps := range r.preds {
		fmt.Fprintf(&b, "preds %d %v", n, ps)
		if r.predChain != nil {
			fmt.Fprintf(&b, " chain %v", r.predChain[n])
		}
		if r.predVia != nil {
			for _, c := range r.predVia[n] {
				fmt.Fprintf(&b, " via %s", call(c))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "any jump=%v walked=%v callers=%v", r.anyJump, r.anyJumpWalked, r.anyCallers)
	for _, c := range r.anyVia {
		fmt.Fprintf(&b, " via %s", call(c))
	}
	fmt.Fprintf(&b, "\nstore %v dynamic=%v prefixes=%v\n", sortedKeys(r.StoreWrites), r.StoreDynamic, r.StorePrefixes)
	for _, c := range r.Cycles {
		var ss []string
		for _, s := range c.Sections {
			ss = append(ss, sec(s))
		}
		fmt.Fprintf(&b, "cycle %v close %s via %s\n", ss, call(c.Close), call(c.Via))
	}
	for _, x := range r.Recursions {
		var ss []string
		for _, s := range x.Sections {
			ss = append(ss, sec(s))
		}
		fmt.Fprintf(&b, "recursion %v %s through=%v jumps=%v\n", ss, call(x.Call), x.FallsThrough, x.Jumps)
	}
	for _, x := range r.Races() {
		fmt.Fprintf(&b, "race %s %s %s %d\n", call(x.Fanout), call(x.Write), x.Path, x.Arms)
	}
	// The var keys the prompt names, asked everywhere.
	keys := map[string]bool{}
	for _, g := range prog.VarGlobals {
		if rest, ok := strings.CutPrefix(g.Path, "var."); ok {
			k, _, _ := strings.Cut(rest, ".")
			keys[k] = true
		}
	}
	ks := sortedKeys(keys)
	for _, u := range prog.Sections {
		s := u.Section
		p, ok := r.places.of(s)
		fmt.Fprintf(&b, "place %s %v pos=%d n=%d ends=%d/%d runs", sec(s), ok, p.pos, p.n, p.firstEnd, p.firstEnds)
		for i := range s.Blocks {
			fmt.Fprintf(&b, " %v", r.BlockRuns(s, i))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "vars %s unset=%v", sec(s), r.AloneUnset(s))
		for i := range s.Blocks {
			for _, k := range ks {
				fmt.Fprintf(&b, " %s@%d=%v/%v/%v", k, i, r.VarSetInUnit(s, i, k), r.VarMaySet(s, i, k), r.VarSetFirst(s, i, k))
			}
		}
		b.WriteString("\n")
	}
	for _, c := range prog.Chunks {
		fmt.Fprintf(&b, "chunk %v", c.Span)
		for _, k := range ks {
			fmt.Fprintf(&b, " %s=%v/%v", k, r.VarMaySetIn(c, k), r.StoreMaySet(c, k))
		}
		if len(c.AST) > 0 {
			f := r.Facts(c)
			out, known := f.VarOut()
			fmt.Fprintf(&b, " facts reads=%d whole=%v out=%v", len(f.VarReads), f.VarWhole, known)
			for _, o := range out {
				fmt.Fprintf(&b, " %s=%s", o.Key, o.V)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// computedTargets jumps to a section and writes a store path its
// earlier chunk names in a global: an edit of that chunk, which makes
// no control call of its own, changes where the walk goes.
const computedTargets = parsetest.Head + "## A\n\n```lua\nT = \"## B\"\nP = \"notes\"\n```\n\n" +
	"```lua\nstore.write(P, \"x\")\njump(T)\n```\n\n## B\n\nText.\n\n## C\n\n```lua\nlocal s = store.read(\"notes\")\n```\n"

// blankProse sets no default model and has a blank prose block between
// two chunks of a jump cycle: text typed there makes the block call a
// model, which fails, so the cycle is no longer certain.
const blankProse = "---\nname: g\ndescription: gen\npromptforge: 1\n---\n# G\n\n## A\n\n```lua\nlocal x = 1\n```\n \n" +
	"```lua\nlocal y = 2\n```\n\n## B\n\n```lua\njump(\"## A\")\n```\n"

// deadWrite writes a store path only after a jump, in code no run
// reaches (the walk reads no values for it, so its walk is reused), and
// a later section reads the path into var.
const deadWrite = parsetest.Head + "## A\n\n```lua\nlocal n = 1\njump(\"## C\")\nstore.write(\"notes\", \"x\")\n```\n\n" +
	"## B\n\n```lua\nlocal m = 2\n```\n\n## C\n\n```lua\nvar.n = store.read(\"notes\")\n```\n\nSay {{ var.n }}.\n"

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestReuseMatchesCold: a walk taken from the last Result of the file
// (reuse) is the walk a cold analysis of the same Program makes, with
// everything the var and store flow compute from it, over keystrokes
// at every line of the test prompts; and reuse happens for a third of
// them at least (these prompts are rich in control flow and store
// writes, which turn it off; a keystroke in a prompt without is reused
// unless it changes a control call, a chunk's ending or the tree).
func TestReuseMatchesCold(t *testing.T) {
	texts := map[string]string{"computed.md": computedTargets, "prose.md": blankProse, "deadwrite.md": deadWrite}
	for _, f := range analysistest.Corpus(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	defer parse.ResetCache()
	tried, reused := 0, 0
	for f, orig := range texts {
		variants := keystrokes(orig)
		if f == "computed.md" {
			variants = variants[:0:0]
			for _, v := range keystrokes(orig) {
				if !strings.Contains(v, `"## B"`) {
					variants = append(variants, v) // the target typed in
				}
			}
		}
		if !testflag.Long() && strings.Contains(f, "/") {
			variants = parsetest.EveryNth(variants, 5)
		}
		for k, v := range variants {
			prev := Analyze(program.Build(parse.Parse(f, []byte(orig))))
			if k%2 == 0 && len(prev.Prog.Sections) > 0 {
				// The var writes made, as the placeholders pass makes
				// them: the reused walk's are built from them.
				prev.VarSetInUnit(prev.Prog.Sections[0].Section, 0, "")
			}
			prog := program.Build(parse.Parse(f, []byte(v)))
			tried++
			got := reuse(prog)
			if got == nil {
				continue
			}
			reused++
			if got.Prog != prog {
				t.Fatal("reuse returned a walk of another Program")
			}
			if g, w := dumpAll(got), dumpAll(analyze(prog)); g != w {
				t.Fatalf("%s: edited text:\n%s\nreused walk:\n%s\ncold walk:\n%s", f, v, g, w)
			}
			runtime.KeepAlive(prev) // the last Result is held weakly
		}
	}
	t.Logf("%d of %d keystrokes reused the last walk", reused, tried)
	if reused*3 < tried {
		t.Errorf("only %d of %d keystrokes reused the last walk", reused, tried)
	}
}

// TestResultKeptWithParse: Analyze keeps its Result with the parse, so
// a second call for the same Program returns it, and the next
// version's analysis finds it after a collection (the Result is
// indexed by file weakly) while the editor holds the parse.
func TestResultKeptWithParse(t *testing.T) {
	defer parse.ResetCache()
	text := parsetest.Head + "## A\n\n```lua\nlocal n = 1\nvar.a = n\n```\n\nText.\n\n## B\n\n```lua\njump(\"## A\")\n```\n"
	pr := parse.Parse("kept.md", []byte(text))
	r := Analyze(program.Of(pr))
	if Analyze(program.Of(pr)) != r {
		t.Fatal("a second Analyze of the same Program made another Result")
	}
	r = nil
	runtime.GC()
	runtime.GC()
	next := parse.Parse("kept.md", []byte(strings.Replace(text, "local n = 1", "local n = 2", 1)))
	if reuse(program.Of(next)) == nil {
		t.Fatal("the next version found no walk to reuse after a collection")
	}
	runtime.KeepAlive(pr)
}
