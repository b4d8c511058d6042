package oldforms

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// Code is the diagnostic code (documented in docs/codes.md).
const Code = "old-form"

// Analyzer reports upstream's retired spellings.
var Analyzer = &analysis.Analyzer{
	Name: "oldforms",
	Doc:  "report spellings upstream renamed or removed, with the replacement and a rewrite",
	Codes: []*analysis.Code{{Name: Code, Severity: analysis.Error,
		Summary: "A spelling upstream PromptForge renamed or removed (models.always, store.inject, sys.taskid, ...): an error where the engine refuses it, a warning where it now means something else."}},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	// The globals an old form starts with; whether the prompt makes its
	// own tasks global; the aliases H1 binds (tools.add("a", "b") adds two
	// when b is one).
	roots := oldRoots()
	ownTasks := false
	for _, g := range prog.Globals {
		if g.Write && g.Expr.Value == "tasks" {
			ownTasks = true
		}
	}
	// Tool objects (astForms): the alias globals of sections, and the
	// variables assigned a tools.bind result.
	var bound []string
	handles := map[string]bool{}
	for _, c := range prog.Calls {
		if c.Canonical() == "tools.bind" {
			if a, ok := c.Arg(0).(*ast.StringExpr); ok {
				handles[a.Value] = true
				if c.Where == api.H1 {
					bound = append(bound, a.Value)
				}
			}
		}
	}
	slices.Sort(bound)
	fp := chunkFP{bound: chunkmemo.Stable(&lastBound, strings.Join(slices.Compact(bound), "\x00")), ownTasks: ownTasks}
	// Each chunk's calls and globals are judged on their own, memoised
	// on the chunk (chunkmemo): besides its text (and the 40 bytes around
	// it that featureTest reads), they depend only on fp.
	n := len(pass.File.Content)
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[chunkFP](ix, chunkKey)
	defer run.Done()
	var af astForms
	for i, ch := range prog.Chunks {
		af.chunk(pass, prog, ch, formsOf(ix.Table(i), ch.Chunk), handles)
		calls := prog.CallsIn(ch)
		if len(calls) == 0 && len(ch.AST) == 0 {
			continue // no globals either
		}
		part := chunkmemo.Part[chunkFP]{Table: ix.Table(i), File: pass.File, FP: fp, Core: ch.Span, Chunks: ix.Chunks(i, i),
			Region: source.Span{Start: max(0, ch.Span.Start-40), End: min(n, ch.Span.End+40)}}
		run.Report(pass, part, func() {
			judgeChunk(pass, prog, calls, ix.Globals(i), roots, ownTasks)
		})
	}
	af.writes(pass, handles)
	placeholderForms(pass)
	return nil, nil
}

// lastBound is the last chunkFP.bound (chunkmemo.Stable).
var lastBound atomic.Pointer[string]

// chunkKey is the memo of a chunk's findings about its calls and
// globals.
var chunkKey = chunkmemo.NewKey("oldforms")

// chunkFP is what they depend on besides the chunk's text.
type chunkFP struct {
	bound    string
	ownTasks bool
}

// judgeChunk reports the old forms among one chunk's calls and globals.
func judgeChunk(pass *analysis.Pass, prog *program.Program, cs []*program.Call, gs []*program.Global, roots map[string]bool, ownTasks bool) {
	for _, c := range cs {
		switch c.Canonical() {
		case "fanout", "tools.add":
			calls(pass, prog, c)
		}
	}
	// The tasks uses that are a control call's target (built when tasks
	// is used).
	var target map[*ast.IdentExpr]bool
	for _, g := range gs {
		if !roots[g.Expr.Value] || g.Write && !g.FieldWrite {
			continue
		}
		if featureTest(pass, prog, g) {
			continue
		}
		root, rest, _ := strings.Cut(g.Path, ".")
		if root == "tasks" {
			if !ownTasks {
				if target == nil {
					target = controlTargets(cs)
				}
				tasks(pass, prog, g, rest, target[g.Expr])
			}
			continue
		}
		member, _, _ := strings.Cut(rest, ".")
		if o, ok := api.LookupOld(root + "." + member); ok && o.Kind == api.OldMember {
			memberUse(pass, prog, g, o, member, prog.CallNamedAt(prog.GlobalSpan(g).Start))
		}
	}
}

// featurePatterns are the texts around a removed name that make it a
// feature test (built on first use).
var featurePatterns = sync.OnceValue(func() [5]*regexp.Regexp {
	return [5]*regexp.Regexp{
		regexp.MustCompile(`^\s*[=~]=\s*nil\b`),                             // X == nil
		regexp.MustCompile(`\bnil\s*[=~]=\s*$`),                             // nil == X
		regexp.MustCompile(`(?:^|[^\w.])(?:if|elseif|while|and|or|\()\s*$`), // if X
		regexp.MustCompile(`^\s*(?:then|do|and|or|\))`),                     // X then
		regexp.MustCompile(`(?:^|[^\w.])not\s*$`),                           // not X
	}
})

// featureTest reports whether g is exactly a removed name (`tasks`,
// `store.read_lines`) compared with nil or tested for truth (`if
// store.inject then`): upstream has such names nil, so does the engine,
// and the test takes upstream's branch (docs/migration.md). Nothing fails
// there, so nothing is reported.
func featureTest(pass *analysis.Pass, prog *program.Program, g *program.Global) bool {
	o, ok := api.LookupOld(g.Path)
	if !ok || g.Write || (o.Kind != api.OldGlobal && o.Kind != api.OldMember) {
		return false
	}
	span := pathSpan(pass, prog, g)
	src := pass.File.Content
	before, after := string(src[max(0, span.Start-40):span.Start]), string(src[span.End:min(len(src), span.End+40)])
	p := featurePatterns()
	if p[0].MatchString(after) || p[1].MatchString(before) || p[4].MatchString(before) {
		return true
	}
	return p[2].MatchString(before) && p[3].MatchString(after)
}

// oldRoots is the set of globals that old members and old globals start
// with (models, tools, store, sys, tasks).
var oldRoots = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, o := range api.OldForms() {
		if o.Kind == api.OldMember || o.Kind == api.OldGlobal {
			root, _, _ := strings.Cut(o.Old, ".")
			m[root] = true
		}
	}
	return m
})

// controlTargets holds the roots of `tasks["## X"]` first arguments of
// the calls cs of jump, execute, fanout and list_from_section.
func controlTargets(cs []*program.Call) map[*ast.IdentExpr]bool {
	target := map[*ast.IdentExpr]bool{}
	for _, c := range cs {
		switch c.Canonical() {
		case "jump", "execute", "fanout", "list_from_section":
			if a, ok := c.Arg(0).(*ast.AttrGetExpr); ok {
				if id, ok := a.Object.(*ast.IdentExpr); ok {
					target[id] = true
				}
			}
		}
	}
	return target
}

// pathSpan is the span of g's path including the closing bracket of a
// last ["key"] segment (tools['local'], tasks["## X"]).
func pathSpan(pass *analysis.Pass, prog *program.Program, g *program.Global) source.Span {
	span := prog.PathSpan(g)
	if !strings.Contains(pass.File.Text(span), "[") {
		return span
	}
	src := pass.File.Content
	for end := span.End; end < len(src); end++ {
		switch src[end] {
		case ' ', '\t':
			continue
		case ']':
			span.End = end + 1
		}
		break
	}
	return span
}

func report(pass *analysis.Pass, span source.Span, o *api.OldForm, fixes ...analysis.SuggestedFix) {
	d := analysis.Diagnostic{Span: span, Code: Code, Message: api.OldMessage(o), SuggestedFixes: fixes}
	if !o.Refused {
		d.Severity = analysis.Warning
	}
	pass.Report(d)
}

// memberUse reports models.always, store.inject, sys.taskid, ... at the
// member's name.
func memberUse(pass *analysis.Pass, prog *program.Program, g *program.Global, o *api.OldForm, member string, c *program.Call) {
	path := pathSpan(pass, prog, g)
	text := pass.File.Text(path)
	span := path
	if i := strings.Index(text, member); i > 0 {
		span = source.Span{Start: path.Start + i, End: path.Start + i + len(member)}
	}
	var fixes []analysis.SuggestedFix
	switch {
	case g.FieldWrite:
	case o.Old == "sys.taskid" && g.Path == o.Old:
		fixes = []analysis.SuggestedFix{
			{Message: "Change to tostring(sys.index)", Edits: []analysis.TextEdit{{Span: path, NewText: "tostring(sys.index)"}}, Safe: true},
			{Message: "Change to sys.index (an integer)", Edits: []analysis.TextEdit{{Span: path, NewText: "sys.index"}}},
		}
	case o.Old == "store.inject" && c != nil && c.Path == o.Old && prog.NameSpan(c) == path:
		call := prog.CallSpan(c)
		if pass.File.Text(call)[len(text):] != "" {
			fixes = []analysis.SuggestedFix{{Message: "Change to untrusted(store.read(...))", Safe: true, Edits: []analysis.TextEdit{
				{Span: path, NewText: "untrusted(store.read"},
				{Span: source.Span{Start: call.End, End: call.End}, NewText: ")"}}}}
		}
	case g.Path == o.Old:
		if e, ok := api.RenamedTo(o.Old); ok {
			// tools['local'] (local is a Lua keyword) becomes
			// tools.add_local; models.always only changes its member.
			edit := analysis.TextEdit{Span: path, NewText: e.Name}
			if text == o.Old {
				edit = analysis.TextEdit{Span: span, NewText: e.Name[strings.IndexByte(e.Name, '.')+1:]}
			}
			fixes = []analysis.SuggestedFix{{Message: "Rename to " + e.Name, Safe: true, Edits: []analysis.TextEdit{edit}}}
		}
	}
	report(pass, span, o, fixes...)
}

// tasks reports the dropped tasks table; tasks["## X"] as a control
// call's target becomes "## X".
func tasks(pass *analysis.Pass, prog *program.Program, g *program.Global, key string, isTarget bool) {
	o, _ := api.LookupOld("tasks")
	span := pathSpan(pass, prog, g)
	var fixes []analysis.SuggestedFix
	text := pass.File.Text(span)
	if lit, ok := strings.CutPrefix(text, "tasks"); ok && key != "" && !strings.Contains(key, ".") {
		lit = strings.TrimSpace(lit)
		if strings.HasPrefix(lit, "[") && strings.HasSuffix(lit, "]") {
			lit = strings.TrimSpace(lit[1 : len(lit)-1])
			fixes = []analysis.SuggestedFix{{Message: "Change to " + lit, Safe: isTarget,
				Edits: []analysis.TextEdit{{Span: span, NewText: lit}}}}
		}
	}
	report(pass, span, o, fixes...)
}

// calls reports the old argument shapes of fanout and tools.add.
func calls(pass *analysis.Pass, prog *program.Program, c *program.Call) {
	switch c.Canonical() {
	case "fanout":
		s, ok := c.Arg(1).(*ast.StringExpr)
		if !ok {
			return
		}
		o, _ := api.LookupOld("fanout")
		span := prog.SpanOf(c, s)
		report(pass, span, o, analysis.SuggestedFix{Message: "Wrap in list_from_section(...)", Safe: true, Edits: []analysis.TextEdit{
			{Span: source.Span{Start: span.Start, End: span.Start}, NewText: "list_from_section("},
			{Span: source.Span{Start: span.End, End: span.End}, NewText: ")"}}})
	case "tools.add":
		if !prog.OldMultiAdd(c) {
			return
		}
		o := *mustOld("tools.add")
		if _, override := c.Arg(1).(*ast.StringExpr); override && len(c.Expr.Args) == 2 {
			// The engine takes the second string as a description
			// override: accepted, with another meaning.
			o.Refused = false
		}
		span, ok := argsSpan(pass, prog, c)
		if !ok {
			report(pass, prog.NameSpan(c), &o)
			return
		}
		d := analysis.SuggestedFix{Message: "Pass the aliases as one array", Safe: true, Edits: []analysis.TextEdit{
			{Span: source.Span{Start: span.Start, End: span.Start}, NewText: "{"},
			{Span: source.Span{Start: span.End, End: span.End}, NewText: "}"}}}
		report(pass, span, &o, d)
	}
}

// argsSpan is the span of a call's arguments, between its parentheses
// without the surrounding blanks (identifiers have no exact span of their
// own, so it is read from the call's text).
func argsSpan(pass *analysis.Pass, prog *program.Program, c *program.Call) (source.Span, bool) {
	call, name := prog.CallSpan(c), prog.NameSpan(c)
	text := pass.File.Text(call)
	if name.End < call.Start || name.End > call.End {
		return source.Span{}, false
	}
	open := strings.IndexByte(text[name.End-call.Start:], '(')
	end := strings.LastIndexByte(text, ')')
	if open < 0 || end < 0 {
		return source.Span{}, false
	}
	start := name.End - call.Start + open + 1
	if start > end {
		return source.Span{}, false
	}
	inner := text[start:end]
	lead := len(inner) - len(strings.TrimLeft(inner, " \t\r\n"))
	trail := len(inner) - len(strings.TrimRight(inner, " \t\r\n"))
	return source.Span{Start: call.Start + start + lead, End: call.Start + end - trail}, true
}

func mustOld(name string) *api.OldForm {
	o, ok := api.LookupOld(name)
	if !ok {
		panic("oldforms: " + name + " is not in engine/api's old-forms table")
	}
	return o
}

// astForms reports the old forms that need statements: an infer call
// whose answer is discarded (before 969ad27 it landed in reply; `reply =
// m:infer(p)` keeps that meaning), and a write to a Tool object's
// description (frozen since 5feeee1). Its chunk is called for every
// chunk (in the loop that judges each chunk's calls, while its memo
// table is at hand), then writes.
type astForms struct {
	w []formWrite
}

// formWrite is a description write of a chunk.
type formWrite struct {
	ch *program.Chunk
	descWrite
}

// chunk reports chunk ch's discarded infer answers and notes its Tool
// objects in handles and its description writes; f is its forms.
func (a *astForms) chunk(pass *analysis.Pass, prog *program.Program, ch *program.Chunk, f *chunkForms, handles map[string]bool) {
	for _, e := range f.infers {
		if c := prog.CallOf(e); c != nil {
			span := prog.CallSpan(c)
			report(pass, span, mustOld("infer"), analysis.SuggestedFix{Message: "Assign the answer to reply", Safe: true,
				Edits: []analysis.TextEdit{{Span: source.Span{Start: span.Start, End: span.Start}, NewText: "reply = "}}})
		}
	}
	for _, h := range f.handles {
		handles[h] = true
	}
	for _, w := range f.writes {
		a.w = append(a.w, formWrite{ch, w})
	}
}

// writes reports the description writes of Tool objects (once every
// chunk's handles are known).
func (a *astForms) writes(pass *analysis.Pass, handles map[string]bool) {
	if len(a.w) == 0 {
		return
	}
	o := mustOld("Tool.description")
	for _, w := range a.w {
		if handles[w.name] {
			descriptionWrite(pass, w.ch, w.st, w.name, o)
		}
	}
}

// chunkForms is what astForms needs of one chunk's statements: its
// infer calls whose answer is discarded, the variables it assigns a
// tools.bind (or tools.need) result, and its writes of a description
// field, in source order.
type chunkForms struct {
	ast0    ast.Stmt
	infers  []*ast.FuncCallExpr
	handles []string
	writes  []descWrite
}

// descWrite is `name.description = ...`.
type descWrite struct {
	st   *ast.AssignStmt
	name string
}

// formsKey is the memo of a chunk's forms.
var formsKey = chunkmemo.NewKey("oldforms-forms")

// noForms is the forms of a chunk without statements.
var noForms = &chunkForms{}

// formsOf returns the forms of chunk c, whose memo table is t. They
// depend on its syntax tree alone, so they are memoised on the parser's
// chunk: after an edit only the chunks that changed are walked again
// (and only those whose text can hold one at all).
func formsOf(t *chunkmemo.Table, c *parse.Chunk) *chunkForms {
	if len(c.AST) == 0 {
		return noForms
	}
	if m, ok := t.Value(formsKey).(*chunkForms); ok && m.ast0 == c.AST[0] {
		return m
	}
	m := &chunkForms{ast0: c.AST[0]}
	isBind := func(e ast.Expr) bool {
		call, ok := e.(*ast.FuncCallExpr)
		if !ok {
			return false
		}
		path, _ := program.Path(call.Func)
		return path == "tools.bind" || path == "tools.need"
	}
	if strings.Contains(c.Source, "infer") || strings.Contains(c.Source, "tools.") || strings.Contains(c.Source, "description") {
		program.Inspect(c.AST, func(n any) bool {
			switch st := n.(type) {
			case *ast.FuncCallStmt:
				e, ok := st.Expr.(*ast.FuncCallExpr)
				if !ok {
					return true
				}
				if path, _ := program.Path(e.Func); e.Method == "infer" || path == "models.infer" {
					m.infers = append(m.infers, e)
				}
			case *ast.LocalAssignStmt:
				for i, e := range st.Exprs {
					if i < len(st.Names) && isBind(e) {
						m.handles = append(m.handles, st.Names[i])
					}
				}
			case *ast.AssignStmt:
				for i, l := range st.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok && i < len(st.Rhs) && isBind(st.Rhs[i]) {
						m.handles = append(m.handles, id.Value)
					}
					a, ok := l.(*ast.AttrGetExpr)
					if !ok {
						continue
					}
					key, ok := a.Key.(*ast.StringExpr)
					id, isIdent := a.Object.(*ast.IdentExpr)
					if ok && isIdent && key.Value == "description" {
						m.writes = append(m.writes, descWrite{st, id.Value})
					}
				}
			}
			return true
		})
	}
	t.SetValue(formsKey, m)
	return m
}

// descriptionWrite reports `h.description = text`; in a section, for a
// statement on one line of its own, it offers `tools.add(h, text)`. That
// also adds the tool to the section, which the write alone did not, so it
// is an editor fix, unless the chunk adds the tool later anyway
// (addedLater): then --fix applies it.
func descriptionWrite(pass *analysis.Pass, ch *program.Chunk, st *ast.AssignStmt, h string, o *api.OldForm) {
	line := ch.FirstLine + st.Line() - 1
	start := pass.File.LineStart(line)
	text := pass.File.Text(source.Span{Start: start, End: pass.File.LineEnd(line)})
	toks := luatok.Lex(text, start, line)
	i := 0
	for i+3 < len(toks) && !(toks[i].Value == h && toks[i+1].Value == "." && toks[i+2].Value == "description" && toks[i+3].Value == "=") {
		i++
	}
	if i+3 >= len(toks) {
		return
	}
	span := source.Span{Start: toks[i].Span.Start, End: toks[i+2].Span.End}
	last := len(toks) - 1
	if ch.Section == nil || len(st.Lhs) != 1 || i != 0 || last < i+4 || !complete(toks[i+4:]) {
		report(pass, span, o)
		return
	}
	report(pass, span, o, analysis.SuggestedFix{Message: "Change to tools.add(" + h + ", ...)", Edits: []analysis.TextEdit{
		{Span: source.Span{Start: toks[i].Span.Start, End: toks[i+4].Span.Start}, NewText: "tools.add(" + h + ", "},
		{Span: source.Span{Start: toks[last].Span.End, End: toks[last].Span.End}, NewText: ")"}},
		Safe: addedLater(ch.AST, st, h)})
}

// addedLater reports whether the top-level statement st of a chunk is
// followed, at top level, by a tools.add call that adds the handle h (as
// an argument or an array member), with no read of h.description between.
// Then the rewrite of `h.description = text` to `tools.add(h, text)` keeps
// the meaning: the section adds the tool anyway, and a later add without
// an override keeps the earlier override (docs/language.md#description-precedence).
func addedLater(stmts []ast.Stmt, st ast.Stmt, h string) bool {
	k := -1
	for i, s := range stmts {
		if s == st {
			k = i
		}
	}
	if k < 0 {
		return false
	}
	for _, s := range stmts[k+1:] {
		read := false
		program.Inspect([]ast.Stmt{s}, func(n any) bool {
			if a, ok := n.(*ast.AttrGetExpr); ok {
				if id, isIdent := a.Object.(*ast.IdentExpr); isIdent && id.Value == h {
					if key, isStr := a.Key.(*ast.StringExpr); isStr && key.Value == "description" {
						read = true
					}
				}
			}
			return !read
		})
		if read {
			return false
		}
		fs, ok := s.(*ast.FuncCallStmt)
		if !ok {
			continue
		}
		call, ok := fs.Expr.(*ast.FuncCallExpr)
		if !ok {
			continue
		}
		if path, _ := program.Path(call.Func); path != "tools.add" {
			continue
		}
		for _, arg := range call.Args {
			if id, isIdent := arg.(*ast.IdentExpr); isIdent && id.Value == h {
				return true
			}
			if t, isTable := arg.(*ast.TableExpr); isTable {
				for _, f := range t.Fields {
					if id, isIdent := f.Value.(*ast.IdentExpr); isIdent && f.Key == nil && id.Value == h {
						return true
					}
				}
			}
		}
	}
	return false
}

// complete reports whether the tokens of one line form a whole expression
// that ends there: brackets balance, no `;` and no trailing operator
// (gopher-lua records no last line for an assignment).
func complete(toks []luatok.Token) bool {
	depth := 0
	for _, t := range toks {
		switch t.Value {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ";":
			return false
		}
	}
	if depth != 0 || len(toks) == 0 {
		return false
	}
	switch last := toks[len(toks)-1]; {
	case last.Kind == luatok.Op && !strings.ContainsAny(last.Value, ")]}"):
		return false
	case last.Value == "and" || last.Value == "or" || last.Value == "not":
		return false
	}
	return true
}
