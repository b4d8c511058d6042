package placeholders

import (
	"fmt"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
	"github.com/forge-lsp/forge-lsp/engine/template"
	"github.com/yuin/gopher-lua/ast"
)

// Codes.
const (
	CodeSyntax    = "placeholder-syntax"
	CodeItem      = "item-outside-fanout"
	CodeNilReply  = "nil-reply"
	CodeUnknownRt = "unknown-placeholder-root"
	CodeLiteral   = "literal-placeholder"
	CodeUnsetVar  = "unset-var-key"
)

// Analyzer checks placeholders.
var Analyzer = &analysis.Analyzer{
	Name: "placeholders",
	Doc:  "check {{ }} placeholders in prose: syntax, item outside fanout, certainly-nil reply, unknown roots",
	Codes: []*analysis.Code{
		{Name: CodeSyntax, Severity: analysis.Error, Summary: "A placeholder is malformed: unclosed {{, empty path segment, var/sys without a key, or a key on args/reply/item."},
		{Name: CodeItem, Severity: analysis.Error, Summary: "{{ item }} is used in prose that runs outside a fanout arm, so the run fails (NilItem)."},
		{Name: CodeNilReply, Severity: analysis.Error, Summary: "{{ reply }} is used where reply is certainly nil."},
		{Name: CodeUnsetVar, Severity: analysis.Error, Summary: "{{ var.key }} names a var key that no code of the prompt assigns, so the run fails (MissingKey)."},
		{Name: CodeLiteral, Severity: analysis.Warning, Summary: "{= expr =} is not a placeholder form: the engine sends it to the model literally."},
		{Name: CodeUnknownRt, Severity: analysis.Warning, Summary: "A placeholder's root is not args, reply, item, var, sys or a global the Lua code assigns."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      runPass,
}

type checker struct {
	pass    *analysis.Pass
	prog    *program.Program
	flow    *flow.Result
	workers map[*parse.Section]bool
	// dynamicFanout is true when some fanout's worker is not a literal.
	dynamicFanout bool
	jumpTargets   map[*parse.Section]bool
	dynamicJump   bool
	// aliases are the bound tool and model aliases (handle globals in
	// section VMs).
	aliases map[string]bool
	// varKeys are the top-level var keys some code assigns; varDynamic is
	// true when var is used as a whole (passed, indexed by a computed
	// key), so any key may exist.
	varKeys    map[string]bool
	varDynamic bool
	// armOnly is true while checking a section that every path enters
	// only as a fanout arm.
	armOnly bool
	// blockAt is the index of the prose block being checked in its
	// section's (or the H1's) blocks.
	blockAt int
	// varShapes are the keys of the table literals var.<key> is assigned,
	// when every assignment is such a literal and nothing else can change
	// it (nil entry: unknown).
	varShapes map[string]map[string]bool
	// funcGlobals and otherGlobals are the globals some code assigns a
	// function, and anything else (or anything unknown), prompt-wide.
	funcGlobals, otherGlobals map[string]bool
	// assigned is true once varShapes and the global kinds are computed
	// (lazily: only placeholders that need them pay for the walk).
	assigned bool
}

// assignments computes varShapes and the global kinds on first use.
func (k *checker) assignments() {
	if !k.assigned {
		k.assigned = true
		k.varShapes = varShapes(k.prog)
		k.funcGlobals, k.otherGlobals = globalKinds(k.prog)
	}
}

func runPass(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	k := &checker{pass: pass, prog: prog, flow: pass.ResultOf[flow.Analyzer].(*flow.Result), workers: map[*parse.Section]bool{}, jumpTargets: map[*parse.Section]bool{}, aliases: map[string]bool{}}
	for _, c := range prog.H1.Calls {
		switch c.Canonical() {
		case "tools.bind", "models.bind", "models.default":
			if a, _, ok := prog.StringArg(c, 0); ok {
				k.aliases[a] = true
			}
		}
	}
	writes := 0
	for _, g := range prog.VarGlobals {
		if g.FieldWrite {
			writes++
		}
	}
	k.varKeys = make(map[string]bool, writes) // sized once: a prompt may set thousands of keys
	for _, g := range prog.VarGlobals {
		rest, ok := strings.CutPrefix(g.Path, "var.")
		if !ok {
			k.varDynamic = true
			continue
		}
		if g.FieldWrite {
			key, _, _ := strings.Cut(rest, ".")
			k.varKeys[key] = true
		}
	}
	for _, c := range prog.Calls {
		name := c.Canonical()
		if name != "fanout" && name != "jump" {
			continue
		}
		t, _, ok := prog.StringArg(c, 0)
		if !ok || prog.ChunkOf(c).Kind != program.SectionChunk {
			if name == "fanout" {
				k.dynamicFanout = true
			} else {
				k.dynamicJump = true
			}
			continue
		}
		if s, err := parse.Resolve(pass.Prompt, prog.ChunkOf(c).Section, t); err == nil {
			if name == "fanout" {
				k.workers[s] = true
			} else {
				k.jumpTargets[s] = true
			}
		}
	}
	// H1 prose.
	replySet := false
	for i, b := range pass.Prompt.H1Blocks {
		if b.Kind != parse.ProseBlock {
			continue
		}
		k.blockAt = i
		k.block(b.Prose, nil, prog.H1.GlobalWrites, !replySet, true, true)
		if strings.TrimSpace(b.Prose.Text) != "" {
			replySet = true
		}
	}
	// Chunks that assign the reply global.
	replyWriters := map[*program.Chunk]bool{}
	for _, g := range prog.Globals {
		if g.Write && !g.FieldWrite && g.Expr.Value == "reply" {
			replyWriters[prog.ChunkOf(g)] = true
		}
	}
	first := firstWalked(pass.Prompt.Sections)
	for _, u := range prog.Sections {
		s := u.Section
		at := k.flow.At(s) // the walk's answers about s, found once
		// A section entered only as a fanout arm starts without a reply
		// in every entry, as the first walked section does.
		k.armOnly = at.In(k.flow.May.Arm) && !at.In(k.flow.May.Walked) && !k.flow.May.Any && !k.jumpTargets[s] && !k.dynamicJump
		nilReply := s == first && !k.jumpTargets[s] && !k.dynamicJump || k.armOnly
		walkedIn := at.In(k.flow.Known.Walked)
		for i, b := range s.Blocks {
			if b.Kind == parse.LuaBlock {
				if nilReply && walkedIn && at.BlockRuns(i) && !sharedWritesReply(replyWriters, u) {
					if c := chunkOf(u, i); c != nil {
						k.nilReplyInLua(c, s)
					}
				}
				if assignsReply(replyWriters, u, i) {
					nilReply = false
				}
				continue
			}
			runs := at.BlockRuns(i)
			walked := walkedIn && runs
			entered := walked || k.armOnly && at.In(k.flow.Known.Arm) && runs
			k.blockAt = i
			k.block(b.Prose, s, u.GlobalWrites, nilReply && entered, walked, runs)
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

// block checks one prose block; walked is true when the block runs in an
// entry that is not a fanout arm on some known path.
// runs is true when the block runs on every entry of a section some known
// path enters (or in the H1).
func (k *checker) block(pr *parse.Prose, s *parse.Section, globals map[string]bool, nilReply, walked, runs bool) {
	k.literalForms(pr)
	if !strings.Contains(pr.Text, "{{") {
		return // no placeholder and nothing unclosed: nothing to check
	}
	// The parse is memoised with spans relative to the text; at maps a
	// reported one to file offsets (not a plain addition in CRLF files).
	t, err := pr.TextTemplate()
	at := func(sp source.Span) source.Span {
		return source.Span{Start: pr.FileOffset(sp.Start), End: pr.FileOffset(sp.End)}
	}
	if err != nil {
		k.pass.Reportf(at(err.Span), CodeSyntax, "%s", err.Message)
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Kind != template.Placeholder {
			continue
		}
		if e := template.Check(n); e != nil {
			k.pass.Reportf(at(e.Span), CodeSyntax, "%s", e.Message)
			continue
		}
		root := n.Segments[0].Name
		switch root {
		case "args":
		case "var":
			key := n.Segments[1].Name
			// Set by the section's own code before this block: set on
			// every entry, without the walk's var flow.
			local := runs && s != nil && k.flow.VarSetInUnit(s, k.blockAt, key)
			if runs && !k.varDynamic && !k.varKeys[key] {
				k.pass.Reportf(at(n.Segments[1].Span), CodeUnsetVar, "no code of this prompt assigns var.%s, and var starts empty, so {{ %s }} fails (MissingKey); assign it in Lua first (var.%s = ...)", key, n.Text, key)
			} else if local {
				if !k.varDynamic && len(n.Segments) > 2 && k.shapeLacks(key, n.Segments[2].Name) {
					k.pass.Reportf(at(n.Segments[2].Span), CodeUnsetVar, "var.%s is only ever assigned tables without a key %q, so {{ %s }} fails (MissingKey)", key, n.Segments[2].Name, n.Text)
				}
			} else if runs && s != nil && k.flow.VarMaySet(s, k.blockAt, key) && !k.flow.VarSetFirst(s, k.blockAt, key) {
				k.pass.Reportf(at(n.Segments[1].Span), CodeUnsetVar, "var.%s is not set the first time section `%s` runs: the code that assigns it runs only after this point, coming back here through a jump cycle, so {{ %s }} fails (MissingKey); assign it before this section is first entered", key, s.Name, n.Text)
			} else if runs && !k.flow.VarMaySet(s, k.blockAt, key) {
				k.pass.Reportf(at(n.Segments[1].Span), CodeUnsetVar, "var.%s is not set here: the code that assigns it runs only after this point in walk order, after the jump (or execute) that enters here, or in an execute chain or fanout arm whose var writes are dropped when it returns, so {{ %s }} fails (MissingKey); assign it before this block runs", key, n.Text)
			} else if runs && !k.varDynamic && len(n.Segments) > 2 && k.shapeLacks(key, n.Segments[2].Name) {
				k.pass.Reportf(at(n.Segments[2].Span), CodeUnsetVar, "var.%s is only ever assigned tables without a key %q, so {{ %s }} fails (MissingKey)", key, n.Segments[2].Name, n.Text)
			}
		case "item":
			if s == nil {
				k.pass.Reportf(at(n.Span), CodeItem, "{{ item }} in H1 prose is always nil (NilItem): item exists only inside fanout arms")
			} else if walked {
				what := "which no fanout uses as its worker"
				if k.workers[s] {
					what = "which the walk (or a jump or execute) also enters outside a fanout arm"
				}
				k.pass.Reportf(at(n.Span), CodeItem, "{{ item }} in section `%s`, %s: item is nil outside fanout arms, so this fails (NilItem) when the section runs", s.Name, what)
			}
		case "reply":
			if nilReply {
				where := "the first H1 prose, before any model reply"
				if s != nil && k.armOnly {
					where = fmt.Sprintf("section `%s`, which runs only as a fanout arm (an arm starts without a reply), before any prose or Lua sets reply", s.Name)
				} else if s != nil {
					where = fmt.Sprintf("section `%s`, the first section the walk runs, before any prose or Lua sets reply", s.Name)
				}
				k.pass.Reportf(at(n.Span), CodeNilReply, "{{ reply }} is certainly nil in %s (NilReply); set `reply` in a Lua block first or use {{ args }}", where)
			}
		case "sys":
			key := n.Segments[1].Name
			if e := template.CheckKey(n); e != nil {
				// A key the engine never sets: it refuses it wherever it
				// stands, in these words. An old form (sys.taskid) is the
				// oldforms pass's, with its rewrite.
				if e.Old == nil {
					k.pass.Report(analysis.Diagnostic{Span: at(n.Segments[1].Span), Code: CodeUnknownRt, Severity: analysis.Error, Message: e.Message})
				}
				continue
			}
			if e, ok := api.Lookup("sys." + key); ok && s == nil && e.Defined&api.H1 == 0 {
				k.report(at(n.Segments[1].Span), runs, "sys.%s is never set in H1 prose (it exists only in sections), so {{ %s }} fails (MissingKey)", key, n.Text)
			} else if key == "index" && s != nil && walked {
				k.report(at(n.Segments[1].Span), true, "sys.index exists only inside fanout arms, and section `%s` runs outside one, so {{ %s }} fails (MissingKey)", s.Name, n.Text)
			} else if key == "reply_finish_reason" && s != nil && !program.ProseBefore(s, k.blockAt) && !k.prog.UnitOf[s].Infers() {
				k.report(at(n.Segments[1].Span), runs, "sys.reply_finish_reason is set after the section's first model round, and no prose block comes before this one, so {{ %s }} fails (MissingKey); use it in a later prose block", n.Text)
			}
		default:
			if globals[root] {
				if runs && k.onlyFunction(root) {
					k.pass.Report(analysis.Diagnostic{Span: at(n.Segments[0].Span), Code: CodeUnknownRt, Severity: analysis.Error,
						Message: fmt.Sprintf("`%s` is only ever assigned functions, which cannot be rendered, so {{ %s }} fails (Serialize); render a value: assign its result to a global, e.g. `%s_text = %s()`", root, n.Text, root, root)})
				}
				continue
			}
			if s != nil && k.aliases[root] {
				k.pass.Reportf(at(n.Segments[0].Span), CodeUnknownRt, "{{ %s }} names a bound tool or model alias, whose global is a handle that cannot be rendered (Serialize); copy a field into a global in Lua, e.g. `%s_name = %s.name`", n.Text, root, root)
				continue
			}
			cands := []string{"args", "reply", "item", "var", "sys"}
			for g := range globals {
				cands = append(cands, g)
			}
			sort.Strings(cands[5:])
			if !program.IsIdent(root) {
				d := analysis.Diagnostic{Span: at(n.Segments[0].Span), Code: CodeUnknownRt,
					Message: fmt.Sprintf("placeholder root %q is not a Lua name, so no global can match it and {{ %s }} fails (UnknownNamespace); write \\{{ to keep the braces literal", root, n.Text)}
				if runs {
					d.Severity = analysis.Error
				}
				k.pass.Report(d)
				continue
			}
			msg := fmt.Sprintf("placeholder root %q is not args, reply, item, var or sys, and no Lua in this VM assigns a global named %s (locals are invisible to placeholders), so it fails (UnknownNamespace)", root, root)
			if o, old := api.LookupOld(root); old && o.Kind == api.OldGlobal {
				msg += ": " + api.OldMessage(o)
			} else if to := suggest.Closest(root, cands); to != "" {
				msg += fmt.Sprintf("; did you mean %q?", to)
			}
			d := analysis.Diagnostic{Span: at(n.Segments[0].Span), Code: CodeUnknownRt, Message: msg}
			if runs && k.certainRoot(s, root) {
				// The engine fails for certain: no code of this VM can
				// make the global (docs/codes.md#unknown-placeholder-root).
				d.Severity = analysis.Error
			}
			k.pass.Report(d)
		}
	}
}

// report reports an unknown-placeholder-root finding, as an error when
// the engine certainly refuses the placeholder where it stands.
func (k *checker) report(span source.Span, certain bool, format string, args ...any) {
	d := analysis.Diagnostic{Span: span, Code: CodeUnknownRt, Message: fmt.Sprintf(format, args...)}
	if certain {
		d.Severity = analysis.Error
	}
	k.pass.Report(d)
}

// certainRoot reports whether no code of the VM that renders prose of
// section s (the H1's when nil) can create global root: none assigns it
// (checked by the caller), none writes globals by computed name (_G,
// rawset, setfenv, load), and no tool or model call names it (alias
// globals).
func (k *checker) certainRoot(s *parse.Section, root string) bool {
	u := k.prog.H1
	if s != nil {
		u = k.prog.UnitOf[s]
	}
	if u == nil {
		return false
	}
	for _, c := range u.Calls {
		switch c.Path {
		case "rawset", "setfenv", "load", "loadstring", "setmetatable", "getfenv":
			return false
		}
	}
	for _, c := range k.prog.Calls {
		if strings.HasPrefix(c.Canonical(), "tools.") || strings.HasPrefix(c.Canonical(), "models.") {
			if a, _, ok := k.prog.StringArg(c, 0); ok && a == root {
				return false
			}
		}
	}
	for _, g := range k.prog.Globals {
		if g.Expr.Value == "_G" && k.prog.ChunkOf(g) != nil {
			for _, ch := range u.Chunks {
				if ch == k.prog.ChunkOf(g) {
					return false
				}
			}
		}
	}
	return true
}

// literalForms reports `{= expr =}`, a form one upstream guide page shows
// but no engine implements: it reaches the model as literal text.
func (k *checker) literalForms(pr *parse.Prose) {
	text := pr.Text
	for off := 0; ; {
		i := strings.Index(text[off:], "{=")
		if i < 0 {
			return
		}
		i += off
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text) - i
		}
		j := strings.Index(text[i+2:i+end], "=}")
		if j < 0 {
			off = i + 2
			continue
		}
		stop := i + 2 + j + 2
		expr := strings.TrimSpace(text[i+2 : i+2+j])
		k.pass.Report(analysis.Diagnostic{Span: source.Span{Start: pr.FileOffset(i), End: pr.FileOffset(stop)}, Code: CodeLiteral,
			Message: fmt.Sprintf("{= %s =} is not a placeholder: the engine sends it to the model as literal text; write {{ %s }} (a global, var.<key>, args, reply or item)", expr, expr)})
		off = stop
	}
}

func chunkOf(u *program.Unit, block int) *program.Chunk {
	for _, c := range u.Chunks {
		if c.Kind == program.SectionChunk && c.Block == block {
			return c
		}
	}
	return nil
}

func sharedWritesReply(writers map[*program.Chunk]bool, u *program.Unit) bool {
	for _, c := range u.Chunks {
		if c.Kind == program.SharedChunk && writers[c] {
			return true
		}
	}
	return false
}

// nilReplyInLua reports top-level uses of `reply` that fail while reply
// is certainly nil (concatenation, arithmetic, length, indexing), up to
// the first statement that assigns or shadows it.
func (k *checker) nilReplyInLua(c *program.Chunk, s *parse.Section) {
	mentions := func(st ast.Stmt) (assigned bool) {
		program.Inspect([]ast.Stmt{st}, func(n any) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok && id.Value == "reply" {
						assigned = true
					}
				}
			case *ast.LocalAssignStmt:
				for _, name := range n.Names {
					if name == "reply" {
						assigned = true
					}
				}
			}
			return !assigned
		})
		return assigned
	}
	isReply := func(e ast.Expr) *ast.IdentExpr {
		if id, ok := e.(*ast.IdentExpr); ok && id.Value == "reply" {
			return id
		}
		return nil
	}
	for _, st := range c.AST {
		switch st.(type) {
		case *ast.FuncCallStmt, *ast.LocalAssignStmt, *ast.AssignStmt, *ast.ReturnStmt:
		default:
			return // control flow: stop at the first statement that may branch
		}
		var bad *ast.IdentExpr
		var what string
		program.Inspect([]ast.Stmt{st}, func(n any) bool {
			if bad != nil {
				return false
			}
			switch n := n.(type) {
			case *ast.FunctionExpr, *ast.LogicalOpExpr:
				return false
			case *ast.StringConcatOpExpr:
				if bad = isReply(n.Lhs); bad == nil {
					bad = isReply(n.Rhs)
				}
				what = "concatenate"
			case *ast.ArithmeticOpExpr:
				if bad = isReply(n.Lhs); bad == nil {
					bad = isReply(n.Rhs)
				}
				what = "perform arithmetic on"
			case *ast.UnaryLenOpExpr:
				bad, what = isReply(n.Expr), "take the length of"
			case *ast.AttrGetExpr:
				bad, what = isReply(n.Object), "index"
			case *ast.FuncCallExpr:
				if n.Receiver != nil {
					bad, what = isReply(n.Receiver), "call a method on"
				}
			}
			return bad == nil
		})
		if bad != nil {
			k.pass.Reportf(k.prog.Span(c, bad), CodeNilReply,
				"reply is certainly nil here (section `%s` is the first section the walk runs, and no prose or Lua has set it), so this fails: attempt to %s a nil value; use args, or check `if reply then`", s.Name, what)
			return
		}
		if mentions(st) {
			return
		}
	}
}

// shapeLacks reports whether var.<key> is only ever assigned table
// literals without sub.
func (k *checker) shapeLacks(key, sub string) bool {
	k.assignments()
	keys := k.varShapes[key]
	return keys != nil && !keys[sub]
}

// onlyFunction reports whether every assignment of global name is a
// function.
func (k *checker) onlyFunction(name string) bool {
	k.assignments()
	return k.funcGlobals[name] && !k.otherGlobals[name]
}

// varShapes returns, per top-level var key, the string keys of the table
// literals it is assigned, when every assignment of var.<key> is a table
// literal with string keys or only positional items (an array, which has
// no keys), no code writes below it, and no code reads var.<key> as a
// whole (it could be changed through that reference).
func varShapes(prog *program.Program) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	unknown := map[string]bool{}
	for _, g := range prog.VarGlobals {
		rest, ok := strings.CutPrefix(g.Path, "var.")
		if !ok {
			continue
		}
		key, deeper, hasDot := strings.Cut(rest, ".")
		switch {
		case g.FieldWrite && hasDot && deeper != "":
			unknown[key] = true // var.key.x = ...
		case !g.FieldWrite && !hasDot:
			unknown[key] = true // var.key read as a whole
		}
	}
	for _, c := range prog.Chunks {
		if len(c.AST) == 0 {
			continue
		}
		program.Inspect(c.AST, func(n any) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for i, l := range as.Lhs {
				path, ok := program.Path(l)
				rest, isVar := strings.CutPrefix(path, "var.")
				if !ok || !isVar || strings.Contains(rest, ".") {
					continue
				}
				t, isTable := as.Rhs[min(i, len(as.Rhs)-1)].(*ast.TableExpr)
				if !isTable || i >= len(as.Rhs) {
					unknown[rest] = true
					continue
				}
				keys := out[rest]
				if keys == nil {
					keys = map[string]bool{}
					out[rest] = keys
				}
				positional, named := false, false
				for _, f := range t.Fields {
					switch k := f.Key.(type) {
					case nil:
						positional = true
					case *ast.StringExpr:
						named = true
						keys[k.Value] = true
					default:
						unknown[rest] = true
					}
				}
				if positional && named {
					unknown[rest] = true
				}
			}
			return true
		})
	}
	for key := range unknown {
		delete(out, key)
	}
	return out
}

// globalKinds sorts the prompt's global assignments into functions
// (function f() end, f = function() end) and everything else.
func globalKinds(prog *program.Program) (funcs, other map[string]bool) {
	funcs, other = map[string]bool{}, map[string]bool{}
	for _, c := range prog.Chunks {
		if len(c.AST) == 0 {
			continue
		}
		program.Inspect(c.AST, func(n any) bool {
			switch n := n.(type) {
			case *ast.FuncDefStmt:
				if n.Name != nil && n.Name.Func != nil {
					if id, ok := n.Name.Func.(*ast.IdentExpr); ok {
						funcs[id.Value] = true
					}
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					id, ok := l.(*ast.IdentExpr)
					if !ok {
						continue
					}
					if i < len(n.Rhs) {
						if _, isFn := n.Rhs[i].(*ast.FunctionExpr); isFn {
							funcs[id.Value] = true
							continue
						}
					}
					other[id.Value] = true
				}
			}
			return true
		})
	}
	// A global also named by a local, a loop variable or a parameter may
	// be shadowed; leave those alone.
	for _, l := range prog.Locals {
		other[l.Name] = true
	}
	return funcs, other
}
