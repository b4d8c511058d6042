package callargs

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/internal/literal"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/yuin/gopher-lua/ast"
)

// Codes.
const (
	CodeArg       = "bad-argument"
	CodeUnwritten = "unwritten-store-path"
	CodeResult    = "bad-result"
	CodeOperand   = "bad-operand"
	CodeSys       = "sys-out-of-context"
)

// Analyzer checks literal call arguments with the engine's rules.
var Analyzer = &analysis.Analyzer{
	Name: "callargs",
	Doc:  "check literal arguments of log, fanout, store and var assignments with the engine's own rules; report store reads of paths nothing writes",
	Codes: []*analysis.Code{
		{Name: CodeArg, Severity: analysis.Error, Summary: "A literal argument breaks a rule the engine checks when the call runs (log message, fanout collection, store path, var value), so the run fails there."},
		{Name: CodeResult, Severity: analysis.Error, Summary: "A chunk returns a literal table or function, or sets reply to a value that is not a string, so the run fails when the chunk ends."},
		{Name: CodeOperand, Severity: analysis.Error, Summary: "A `..`, arithmetic, `#`, index or call gets a value whose type it refuses (nil, a boolean, a function, a table), and the value is known before the run, so the run fails there."},
		{Name: CodeSys, Severity: analysis.Error, Summary: "sys.index outside a fanout arm, or sys.model / sys.reply_finish_reason before the section's first prose block or inference: the field does not exist there, so reading it fails (unknown sys field)."},
		{Name: CodeUnwritten, Severity: analysis.Error, Summary: "store.read (or read_numbered, str_replace) of a literal path that no code of the prompt writes, and no input is declared, so the read fails (file not found)."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	// via, while set, is the chunk's call that runs the call being
	// judged (in a helper's body): a failure is reported there.
	var via *program.CallSite
	report := func(c *program.Call, e ast.Expr, code string, err error) {
		if via != nil {
			pass.Report(atSite(pass, prog, via, c, e, code, err))
			return
		}
		d := analysis.Diagnostic{Span: prog.SpanOf(c, e), Code: code, Message: err.Error()}
		if c.InFunc {
			d.Severity = analysis.Warning
			d.Message += " (when this function runs)"
		}
		pass.Report(d)
	}
	// The reads of unset var keys, reported first: the operation or
	// argument they fail is not reported again.
	varDone, doneKeys := varReads(pass, prog, fl)
	inputDeclared := pass.Prompt.Frontmatter != nil && pass.Prompt.Frontmatter.Input != nil
	// checkCall judges one evaluation of call c (facts holds its
	// arguments), reporting whether it found anything.
	checkCall := func(c *program.Call, facts *value.Facts) (reported bool) {
		rep := func(c *program.Call, e ast.Expr, code string, err error) {
			reported = true
			if !varDone[e] {
				report(c, e, code, err)
			}
		}
		passReport := func(d analysis.Diagnostic) {
			reported = true
			pass.Report(d)
		}
		name := c.Canonical()
		args := facts.CallArgs(c.Expr)
		// arg is argument i as the engine sees it, with ok false when its
		// type is not known.
		arg := func(i int) (rules.Value, bool) { return args.At(i).Rules() }
		// at is where to report argument i: the argument, or the call
		// when it is absent.
		at := func(i int) ast.Expr {
			if e := c.Arg(i); e != nil {
				return e
			}
			return c.Expr
		}
		if name == "log" && len(c.Expr.Args) != 1 {
			rep(c, c.Expr, CodeArg, fmt.Errorf("log expects exactly one argument"))
			return reported
		}
		if name == "tools.add_local" {
			return reported // the addlocal analyzer reports its shape (add-local-shape)
		}
		if !typesOK(c, name, arg, at, rep) {
			return reported
		}
		switch name {
		case "log":
			if v, ok := arg(0); ok && v.Type == "string" && args.At(0).Const {
				if err := rules.LogMessage(v.Str); err != nil {
					rep(c, c.Arg(0), CodeArg, err)
				}
			}
		case "fanout":
			if _, heading := c.Arg(1).(*ast.StringExpr); heading {
				return reported // the old list-heading form: the oldforms pass reports it
			}
			v, ok := arg(1)
			if !ok || c.Arg(1) == nil {
				return reported
			}
			if err := rules.FanoutCollection(v); err != nil {
				rep(c, c.Arg(1), CodeArg, err)
			} else if v.Len == 0 {
				rep(c, c.Arg(1), CodeArg, rules.FanoutMembers(0))
			} else if fv := args.At(1); fv.Shape != nil {
				for i, m := range fv.Shape.Array {
					if rv, ok := m.Rules(); ok {
						if err := rules.FanoutMember(i+1, rv); err != nil {
							rep(c, c.Arg(1), CodeArg, err)
							break
						}
					}
				}
			}
		case "store.glob":
			if p, ok := args.At(0).StrConst(); ok {
				if _, err := rules.CompileGlob(p); err != nil {
					rep(c, c.Arg(0), CodeArg, err)
				}
			}
		default:
			if !strings.HasPrefix(name, "store.") {
				return reported
			}
			p, ok := args.At(0).StrConst()
			if !ok {
				return reported
			}
			if err := rules.StorePath(p); err != nil {
				rep(c, c.Arg(0), CodeArg, err)
				return reported
			}
			if err := storeArgs(args, c, name, p); err != nil {
				rep(c, err.at, CodeArg, err.err)
				return reported
			}
			switch name {
			case "store.read", "store.read_numbered", "store.str_replace":
				if inputDeclared || c.InFunc || !fl.Straight(c) {
					return reported
				}
				if fl.MayWrite(p) {
					if !fl.StoreMaySet(prog.ChunkOf(c), p) && fl.Reached(c) {
						passReport(analysis.Diagnostic{Span: prog.SpanOf(c, c.Arg(0)), Code: CodeUnwritten,
							Message: fmt.Sprintf("file not found: %s: the only writes of it run after this read in walk order (a later section, or one this read's section never reaches first), and the store starts empty; write it before, or guard the read with store.exists(%q)", p, p)})
					}
					return reported
				}
				passReport(analysis.Diagnostic{Span: prog.SpanOf(c, c.Arg(0)), Code: CodeUnwritten,
					Message: fmt.Sprintf("file not found: %s: no store.write or store.append of this prompt can create it, and the store starts empty; write it first, guard the read with store.exists(%q), or declare the run's input", p, p)})
			}
		}
		return reported
	}
	// The calls in function bodies first: they are judged where chunks
	// call them, so what is found depends on other chunks.
	for _, c := range prog.Calls {
		if !c.InFunc || !judgedAt(c) {
			continue
		}
		// A call in a helper's body that a chunk's call certainly runs
		// is judged with the arguments of that run, and a failure is the
		// failure of the chunk's call.
		if sites(fl, c, func(s *program.CallSite) bool {
			via = s
			defer func() { via = nil }()
			return checkCall(c, s.Facts)
		}) {
			continue
		}
		judgeViews(fl, prog, c, checkCall)
	}
	// Then each chunk's own findings: its top-level calls, operations
	// and results. They depend on the chunk, its facts and which of its
	// var reads were reported, so they are memoised on the chunk
	// (chunkmemo) and judged again only when one of those changed.
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[chunkFP](ix, chunkKey)
	defer run.Done()
	for i, ch := range prog.Chunks {
		if len(ch.AST) == 0 {
			continue
		}
		part := chunkmemo.Part[chunkFP]{Table: ix.Table(i), Chunks: ix.Chunks(i, i), File: pass.File, Region: ch.Span,
			FP: chunkFP{facts: fl.Facts(ch), progFacts: prog.Facts(ch), kind: ch.Kind, input: inputDeclared, done: doneKeys[ch]}}
		calls := prog.CallsIn(ch)
		for _, c := range calls {
			if !c.InFunc && storeReadsWalk(c) {
				part.Table = nil // its finding depends on the walk's store writes
				break
			}
		}
		run.Report(pass, part, func() {
			for _, c := range calls {
				if !c.InFunc && judgedAt(c) {
					judgeViews(fl, prog, c, checkCall)
				}
			}
			operands(pass, prog, fl, ch, varDone)
			results(pass, prog, ch)
			for _, b := range badVarValues(ch.Chunk) {
				pass.Reportf(prog.Span(ch, b.expr), CodeArg, "%s; store data (strings, numbers, booleans, tables) in var, and keep functions in globals or locals", b.msg)
			}
		})
	}
	for _, rc := range fl.Races() {
		pass.Reportf(prog.SpanOf(rc.Write, rc.Write.Arg(0)), CodeArg, "write-write race on %s: every arm of the fanout at line %d (%d members) writes this path, and the store lets only the first arm to write a path write it; put item or sys.index in the path, or write once from the caller after fanout returns",
			rc.Path, pass.Prompt.File.Line(prog.CallSpan(rc.Fanout).Start), rc.Arms)
	}
	sysFields(pass, prog, fl)
	return nil, nil
}

// chunkKey is the memo of a chunk's own findings (see run).
var chunkKey = chunkmemo.NewKey("callargs")

// chunkFP is what a chunk's own findings depend on besides its text: its
// facts (in the walk, and in its VM alone), its kind, whether the prompt
// declares an input, and which of its var reads varReads reported (their
// operations are not reported again).
type chunkFP struct {
	facts, progFacts *value.Facts
	kind             program.ChunkKind
	input            bool
	done             string
}

// judgedAt reports whether run judges call c: checkCall has a rule for
// it, and it runs where the rule holds (an H1 call only for log and the
// store).
func judgedAt(c *program.Call) bool {
	if c.Where == api.H1 && c.Canonical() != "log" && !strings.HasPrefix(c.Canonical(), "store.") {
		return false
	}
	return judged(c.Canonical())
}

// storeReadsWalk reports whether judging call c may ask the walk whether
// something wrote the path it reads (unwritten-store-path).
func storeReadsWalk(c *program.Call) bool {
	switch c.Canonical() {
	case "store.read", "store.read_numbered", "store.str_replace":
		return true
	}
	return false
}

// judgeViews judges each evaluation of call c (in a loop unrolled, at
// each site of the helper that makes it) on its own: one that certainly
// fails is a failure of the run when it runs.
func judgeViews(fl *flow.Result, prog *program.Program, c *program.Call, checkCall func(*program.Call, *value.Facts) bool) {
	for _, facts := range fl.Facts(prog.ChunkOf(c)).Views(c.Expr) {
		if checkCall(c, facts) {
			break
		}
	}
}

// judged reports whether checkCall has a rule for calls of the host
// function name: an argument type (rules.ArgTypes), or a rule of its own.
func judged(name string) bool {
	if name == "tools.add_local" {
		return false // the addlocal analyzer judges it
	}
	return len(rules.ArgTypes[name]) > 0 || name == "log" || name == "fanout" || strings.HasPrefix(name, "store.")
}

// badVarValue is a literal value a chunk assigns to a var field that the
// engine rejects, with the rule's message.
type badVarValue struct {
	expr ast.Expr
	msg  string
}

// varMemo holds a chunk's bad var values; ast0 is the AST they were
// found in.
type varMemo struct {
	ast0 ast.Stmt
	bad  []badVarValue
}

type varMemoKey struct{}

// badVarValues returns the literal var-field values of chunk c the engine
// rejects, in source order. They depend on the chunk's AST alone, so they
// are memoised on the parser's chunk: after an edit only the chunks that
// changed are walked again.
func badVarValues(c *parse.Chunk) []badVarValue {
	if len(c.AST) == 0 {
		return nil
	}
	if m, ok := c.Memo(varMemoKey{}).(*varMemo); ok && m.ast0 == c.AST[0] {
		return m.bad
	}
	m := &varMemo{ast0: c.AST[0]}
	program.Inspect(c.AST, func(n any) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, l := range as.Lhs {
			if i >= len(as.Rhs) {
				break
			}
			path, ok := program.Path(l)
			if !ok || !strings.HasPrefix(path, "var.") {
				continue
			}
			v, ok := literal.Value(as.Rhs[i])
			if !ok {
				continue
			}
			if err := rules.VarValue(path, v); err != nil {
				m.bad = append(m.bad, badVarValue{as.Rhs[i], err.Error()})
			}
		}
		return true
	})
	c.SetMemo(varMemoKey{}, m)
	return m.bad
}

// results checks a chunk's top-level return value and, in sections, the
// literal values it assigns to the reply global, with the engine's rules.
func results(pass *analysis.Pass, prog *program.Program, ch *program.Chunk) {
	var done map[ast.Expr]bool
	for _, r := range literalResults(ch.Chunk, ch.Kind == program.SectionChunk) {
		if done == nil {
			done = map[ast.Expr]bool{}
		}
		done[r.expr] = true
		if r.msg != "" {
			pass.Reportf(prog.Span(ch, r.expr), CodeResult, "%s", r.msg)
		}
	}
	valueResults(pass, prog, ch, done)
}

// literalResult is a literal a chunk returns or assigns to reply, with
// the rule's message when the engine refuses it ("" when it accepts it).
type literalResult struct {
	expr ast.Expr
	msg  string
}

// resultsMemo holds a chunk's literal results; ast0 is the AST they
// were found in.
type resultsMemo struct {
	ast0 ast.Stmt
	rs   []literalResult
}

type resultsKey struct{ section bool }

// literalResults returns the literal values chunk c returns at top level
// and, in a section (section), assigns to reply, in source order, each
// with the rule's message when the engine refuses it. They depend on the
// chunk's AST alone, so they are memoised on the parser's chunk.
func literalResults(c *parse.Chunk, section bool) []literalResult {
	if len(c.AST) == 0 {
		return nil
	}
	key := resultsKey{section}
	if m, ok := c.Memo(key).(*resultsMemo); ok && m.ast0 == c.AST[0] {
		return m.rs
	}
	m := &resultsMemo{ast0: c.AST[0]}
	func() {
		for _, st := range c.AST {
			switch st := st.(type) {
			case *ast.ReturnStmt:
				if len(st.Exprs) > 0 {
					if v, ok := literal.Value(st.Exprs[0]); ok {
						r := literalResult{expr: st.Exprs[0]}
						if err := rules.ReturnValue(v); err != nil {
							r.msg = err.Error()
						}
						m.rs = append(m.rs, r)
					}
				}
				return
			case *ast.AssignStmt:
				if !section {
					continue
				}
				for i, l := range st.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok && id.Value == "reply" && i < len(st.Rhs) {
						if v, ok := literal.Value(st.Rhs[i]); ok {
							r := literalResult{expr: st.Rhs[i]}
							if err := rules.ReplyValue(v); err != nil {
								r.msg = err.Error() + " (the run reads reply back when the chunk ends); assign a string, e.g. tostring(...)"
							}
							m.rs = append(m.rs, r)
						}
					}
				}
			}
		}
	}()
	c.SetMemo(key, m)
	return m.rs
}

// typesOK checks the arguments of a host function against the types the
// runtime accepts (rules.ArgTypes); it reports the first refused one.
func typesOK(c *program.Call, name string, arg func(int) (rules.Value, bool), at func(int) ast.Expr, report func(*program.Call, ast.Expr, string, error)) bool {
	for i := range rules.ArgTypes[name] {
		v, ok := arg(i)
		if !ok {
			continue
		}
		if err := rules.Arg(name, i, v); err != nil {
			report(c, at(i), CodeArg, err)
			return false
		}
	}
	return true
}

type argErr struct {
	at  ast.Expr
	err error
}

// storeArgs checks the arguments after a store function's path: line
// ranges and the replace anchor.
func storeArgs(args value.CallArgs, c *program.Call, name, p string) *argErr {
	switch name {
	case "store.read", "store.read_numbered":
		var first, last *float64
		for i, dst := range []**float64{&first, &last} {
			v := args.At(i + 1)
			if v.T == value.Nil {
				continue
			}
			n, ok := v.NumConst()
			if !ok {
				return nil
			}
			*dst = &n
		}
		if err := rules.LineRange(p, first, last); err != nil {
			i := 1
			if first == nil {
				i = 2
			}
			return &argErr{c.Arg(i), err}
		}
	case "store.str_replace":
		v := args.At(1)
		if old, ok := v.StrConst(); ok && c.Arg(1) != nil {
			if err := rules.Anchor(old); err != nil {
				return &argErr{c.Arg(1), fmt.Errorf("%v (store.str_replace of %s)", err, p)}
			}
		}
	}
	return nil
}

// operands reports the operations that fail whenever they run (`..`,
// arithmetic, `#`, index or call on a value of a refused type).
func operands(pass *analysis.Pass, prog *program.Program, fl *flow.Result, ch *program.Chunk, done map[ast.Expr]bool) {
	{
		for _, op := range fl.Facts(ch).Ops {
			if done[op.Expr] {
				continue
			}
			d := analysis.Diagnostic{Span: prog.Span(ch, op.Expr), Code: CodeOperand, Message: op.Msg}
			if op.Code != "" {
				d.Code = op.Code
			}
			if op.What != "" {
				d.Message += " (" + op.What + ")"
			}
			d.Message += "; the value is known before the run"
			if sp, ok := innerSpan(prog, ch, op.Inner); ok {
				d.Related = []analysis.RelatedInformation{{Span: sp, Message: "the operation that fails, in the function called here"}}
			}
			if op.InFunc {
				d.Severity = analysis.Warning
				d.Message += " (when this function runs)"
			}
			pass.Report(d)
		}
	}
}

// varReads reports the reads of var.<key> that certainly see nil where
// nil fails (an operand, a string argument): no code that may run
// before them in walk order assigns the key (docs/language.md#var).
//
// It also returns, per chunk with such a read, a key of which of its
// reads (value.Facts.VarReads) it reported, for the chunk's memo.
func varReads(pass *analysis.Pass, prog *program.Program, fl *flow.Result) (map[ast.Expr]bool, map[*program.Chunk]string) {
	done := map[ast.Expr]bool{}
	var keys map[*program.Chunk]string
	for _, ch := range prog.Chunks {
		var key []byte
		if len(ch.AST) == 0 || ch.Kind == program.SharedChunk {
			continue
		}
		reads := fl.Facts(ch).VarReads
		if len(reads) == 0 || ch.Kind == program.SectionChunk && !fl.BlockRuns(ch.Section, ch.Block) {
			continue
		}
		for i, r := range reads {
			if r.InFunc || r.Cond || r.Written || r.MayBefore {
				continue
			}
			if ch.Kind == program.H1Chunk && fl.VarMaySet(nil, ch.Block, r.Key) || ch.Kind == program.SectionChunk && fl.VarSetFirst(ch.Section, ch.Block, r.Key) {
				continue
			}
			code, what := CodeOperand, "attempt to "+r.Use+" a nil value"
			if strings.HasPrefix(r.Use, "pass nil to ") {
				code, what = CodeArg, strings.TrimPrefix(r.Use, "pass nil to ")+" gets nil"
			}
			if ch.Kind == program.SectionChunk && fl.VarMaySet(ch.Section, ch.Block, r.Key) {
				done[r.Expr] = true
				key = binary.AppendUvarint(key, uint64(i))
				pass.Reportf(prog.Span(ch, r.Expr), code, "%s: var.%s is not set the first time section `%s` runs (the code that assigns it runs only after this point, coming back here through a jump cycle); assign var.%s before this section is first entered", what, r.Key, ch.Section.Name, r.Key)
				continue
			}
			done[r.Expr] = true
			key = binary.AppendUvarint(key, uint64(i))
			pass.Reportf(prog.Span(ch, r.Expr), code, "%s: var.%s is not set here (no code that can run before this point in walk order assigns it; writes in a later section, or in an execute chain or fanout arm, do not count); assign var.%s before this block", what, r.Key, r.Key)
		}
		if key != nil {
			if keys == nil {
				keys = map[*program.Chunk]string{}
			}
			keys[ch] = string(key)
		}
	}
	return done, keys
}

// sysFields reports reads of the sys fields that exist only in some
// contexts (docs/language.md#sys) where they certainly do not: sys.index
// outside fanout arms, sys.model before the section's first prose
// block, sys.reply_finish_reason before any inference. A read inside a
// function is not judged (it runs later).
func sysFields(pass *analysis.Pass, prog *program.Program, fl *flow.Result) {
	for _, g := range prog.Globals {
		// The record's own fields first: most globals are not read
		// here, and their names are a pointer away.
		if g.InFunc || g.Write || g.FieldWrite {
			continue
		}
		field, ok := strings.CutPrefix(g.Path, "sys.")
		if !ok || g.Expr.Value != "sys" {
			continue
		}
		field, _, _ = strings.Cut(field, ".")
		if why := sysMissing(prog, fl, prog.ChunkOf(g), field); why != "" {
			pass.Reportf(prog.GlobalSpan(g), CodeSys, "unknown sys field '%s': %s, so the read fails; read it where it exists, or guard it with pcall", field, why)
		}
	}
	// Reads in a helper's body (a local or shared-library function) are
	// judged where a chunk's call certainly runs them, in that chunk's
	// context.
	for _, ch := range prog.Chunks {
		if len(ch.AST) == 0 {
			continue
		}
		for _, r := range prog.Facts(ch).SysReads() {
			if why := sysMissing(prog, fl, ch, r.Field); why != "" {
				who := r.Name
				if who == "" {
					who = "the function called here"
				}
				pass.Report(analysis.Diagnostic{Span: prog.Span(ch, r.Call), Code: CodeSys,
					Message: fmt.Sprintf("unknown sys field '%s': %s, so the read in this call of %s fails; read it where it exists, or pass it as an argument", r.Field, why, who),
					Related: []analysis.RelatedInformation{{Span: sysReadSpan(prog, r), Message: "sys." + r.Field + " is read here"}}})
			}
		}
	}
}

// sysReadSpan is where a helper's read of a sys field is.
func sysReadSpan(prog *program.Program, r value.SysRead) source.Span {
	for _, ch := range prog.Chunks {
		if prog.HasSpan(ch, r.Expr) {
			return prog.Span(ch, r.Expr)
		}
	}
	return source.Span{}
}

// sysMissing says why sys.<field> does not exist where chunk ch reads
// it, or "" when it may.
func sysMissing(prog *program.Program, fl *flow.Result, ch *program.Chunk, field string) string {
	switch ch.Kind {
	case program.H1Chunk:
		switch field {
		case "index", "model", "reply_finish_reason":
			return "the H1 has no sys." + field
		}
	case program.SectionChunk:
		s := ch.Section
		if !fl.BlockRuns(s, ch.Block) {
			return ""
		}
		switch field {
		case "index":
			if !fl.May.Arm.Has(s) {
				return fmt.Sprintf("sys.index exists only in fanout arms, and no fanout runs section `%s` as a worker", s.Name)
			}
		case "model":
			if !program.ProseBefore(s, ch.Block) {
				return "sys.model is set from the section's first prose block on, and no prose block comes before this one"
			}
		case "reply_finish_reason":
			if !program.ProseBefore(s, ch.Block) && !prog.UnitOf[s].Infers() {
				return "sys.reply_finish_reason is set after an inference, and no prose block or infer call comes before this one"
			}
		}
	}
	return ""
}

// innerSpan finds the span of a failing expression in a function body
// that a call of chunk ch runs: in the shared library or in ch itself
// (a local helper).
func innerSpan(prog *program.Program, ch *program.Chunk, inner ast.Expr) (source.Span, bool) {
	if inner == nil {
		return source.Span{}, false
	}
	for _, c := range []*program.Chunk{prog.Shared, ch} {
		if c == nil || len(c.AST) == 0 {
			continue
		}
		found := false
		program.Inspect(c.AST, func(n any) bool {
			if found {
				return false
			}
			if e, ok := n.(ast.Expr); ok && e == inner {
				found = true
				return false
			}
			return true
		})
		if found {
			return prog.Span(c, inner), true
		}
	}
	return source.Span{}, false
}
