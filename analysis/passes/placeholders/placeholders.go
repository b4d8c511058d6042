package placeholders

import (
	"fmt"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/suggest"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// Codes.
const (
	CodeSyntax    = "placeholder-syntax"
	CodeItem      = "item-outside-fanout"
	CodeNilReply  = "nil-reply"
	CodeUnknownRt = "unknown-placeholder-root"
)

// Analyzer checks placeholders.
var Analyzer = &analysis.Analyzer{
	Name: "placeholders",
	Doc:  "check {{ }} placeholders in prose: syntax, item outside fanout, certainly-nil reply, unknown roots",
	Codes: []*analysis.Code{
		{Name: CodeSyntax, Severity: analysis.Error, Summary: "A placeholder is malformed: unclosed {{, empty path segment, var/sys without a key, or a key on args/reply/item."},
		{Name: CodeItem, Severity: analysis.Warning, Summary: "{{ item }} is used where no fanout arm provides it."},
		{Name: CodeNilReply, Severity: analysis.Warning, Summary: "{{ reply }} is used where reply is certainly nil."},
		{Name: CodeUnknownRt, Severity: analysis.Warning, Summary: "A placeholder's root is not args, reply, item, var, sys or a global the Lua code assigns."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      runPass,
}

type checker struct {
	pass    *analysis.Pass
	prog    *program.Program
	workers map[*parse.Section]bool
	// dynamicFanout is true when some fanout's worker is not a literal.
	dynamicFanout bool
	jumpTargets   map[*parse.Section]bool
	dynamicJump   bool
	sysKeys       []string
	// aliases are the bound tool and model aliases (handle globals in
	// section VMs).
	aliases map[string]bool
}

func runPass(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	k := &checker{pass: pass, prog: prog, workers: map[*parse.Section]bool{}, jumpTargets: map[*parse.Section]bool{}, aliases: map[string]bool{}}
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind", "models.bind", "models.default":
			if a, _, ok := prog.StringArg(c, 0); ok {
				k.aliases[a] = true
			}
		}
	}
	for _, m := range api.Members("sys", api.Anywhere) {
		k.sysKeys = append(k.sysKeys, m)
	}
	for _, c := range prog.Calls {
		name := c.Canonical()
		if name != "fanout" && name != "jump" {
			continue
		}
		t, _, ok := prog.StringArg(c, 0)
		if !ok || c.Chunk.Kind != program.SectionChunk {
			if name == "fanout" {
				k.dynamicFanout = true
			} else {
				k.dynamicJump = true
			}
			continue
		}
		if s, err := parse.Resolve(pass.Prompt, c.Chunk.Section, t); err == nil {
			if name == "fanout" {
				k.workers[s] = true
			} else {
				k.jumpTargets[s] = true
			}
		}
	}
	// H1 prose.
	replySet := false
	for _, b := range pass.Prompt.H1Blocks {
		if b.Kind != parse.ProseBlock {
			continue
		}
		k.block(b.Prose, nil, prog.H1.GlobalWrites, !replySet)
		if strings.TrimSpace(b.Prose.Text) != "" {
			replySet = true
		}
	}
	// Chunks that assign the reply global.
	replyWriters := map[*program.Chunk]bool{}
	for _, g := range prog.Globals {
		if g.Write && !g.FieldWrite && g.Expr.Value == "reply" {
			replyWriters[g.Chunk] = true
		}
	}
	first := firstWalked(pass.Prompt.Sections)
	for _, u := range prog.Sections {
		s := u.Section
		nilReply := s == first && !k.jumpTargets[s] && !k.dynamicJump
		for i, b := range s.Blocks {
			if b.Kind == parse.LuaBlock {
				if assignsReply(replyWriters, u, i) {
					nilReply = false
				}
				continue
			}
			k.block(b.Prose, s, u.GlobalWrites, nilReply)
			if strings.TrimSpace(b.Prose.Text) != "" {
				nilReply = false
			}
		}
	}
	return nil, nil
}

// firstWalked returns the first top-level section that is on the walk.
func firstWalked(ss []*parse.Section) *parse.Section {
	for _, s := range ss {
		if !s.OffWalk {
			return s
		}
	}
	return nil
}

// assignsReply reports whether the shared library or the section's chunk
// at block index i assigns the reply global.
func assignsReply(writers map[*program.Chunk]bool, u *program.Unit, i int) bool {
	for _, c := range u.Chunks {
		if writers[c] && (c.Kind == program.SharedChunk || c.Block == i) {
			return true
		}
	}
	return false
}

func (k *checker) block(pr *parse.Prose, s *parse.Section, globals map[string]bool, nilReply bool) {
	// Prose.Template maps spans to file offsets, which is not a plain
	// addition in CRLF files.
	t, err := pr.Template()
	if err != nil {
		k.pass.Reportf(err.Span, CodeSyntax, "%s", err.Message)
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Kind != template.Placeholder {
			continue
		}
		if e := template.Check(n); e != nil {
			k.pass.Reportf(e.Span, CodeSyntax, "%s", e.Message)
			continue
		}
		root := n.Segments[0].Name
		switch root {
		case "args", "var":
		case "item":
			if s == nil {
				k.pass.Reportf(n.Span, CodeItem, "{{ item }} in H1 prose is always nil (NilItem): item exists only inside fanout arms")
			} else if !k.workers[s] && !k.dynamicFanout {
				k.pass.Reportf(n.Span, CodeItem, "{{ item }} in section `%s`, which no fanout uses as its worker: item is nil outside fanout arms, so this fails (NilItem) when the section runs", s.Name)
			}
		case "reply":
			if nilReply {
				where := "the first H1 prose, before any model reply"
				if s != nil {
					where = fmt.Sprintf("section `%s`, the first section the walk runs, before any prose or Lua sets reply", s.Name)
				}
				k.pass.Reportf(n.Span, CodeNilReply, "{{ reply }} is certainly nil in %s (NilReply); set `reply` in a Lua block first or use {{ args }}", where)
			}
		case "sys":
			key := n.Segments[1].Name
			found := false
			for _, m := range k.sysKeys {
				if m == key {
					found = true
				}
			}
			if found {
				if e, ok := api.Lookup("sys." + key); ok && s == nil && e.Defined&api.H1 == 0 {
					k.pass.Reportf(n.Segments[1].Span, CodeUnknownRt, "sys.%s is never set in H1 prose (it exists only in sections), so {{ %s }} fails (MissingKey)", key, n.Text)
				} else if key == "index" && s != nil && !k.workers[s] && !k.dynamicFanout {
					k.pass.Reportf(n.Segments[1].Span, CodeUnknownRt, "sys.index exists only inside fanout arms, and no fanout uses section `%s` as its worker, so {{ %s }} fails (MissingKey)", s.Name, n.Text)
				}
			}
			if !found {
				msg := fmt.Sprintf("unknown sys key %q in {{ %s }}; sys keys: %s", key, n.Text, strings.Join(k.sysKeys, ", "))
				if to := suggest.Closest(key, k.sysKeys); to != "" {
					msg = fmt.Sprintf("unknown sys key %q in {{ %s }}; did you mean sys.%s?", key, n.Text, to)
				}
				k.pass.Reportf(n.Segments[1].Span, CodeUnknownRt, "%s", msg)
			}
		default:
			if globals[root] {
				continue
			}
			if s != nil && k.aliases[root] {
				k.pass.Reportf(n.Segments[0].Span, CodeUnknownRt, "{{ %s }} names a bound tool or model alias, whose global is a handle that cannot be rendered (Serialize); copy a field into a global in Lua, e.g. `%s_name = %s.name`", n.Text, root, root)
				continue
			}
			cands := []string{"args", "reply", "item", "var", "sys"}
			for g := range globals {
				cands = append(cands, g)
			}
			sort.Strings(cands[5:])
			msg := fmt.Sprintf("placeholder root %q is not args, reply, item, var or sys, and no Lua in this VM assigns a global named %s (locals are invisible to placeholders), so it fails (UnknownNamespace)", root, root)
			if to := suggest.Closest(root, cands); to != "" {
				msg += fmt.Sprintf("; did you mean %q?", to)
			}
			k.pass.Reportf(n.Segments[0].Span, CodeUnknownRt, "%s", msg)
		}
	}
}
