package format

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/luatok"
)

// The printer lays a chunk out in StyLua's style (docs/formatting.md):
// one statement per line, blocks indented, one space around binary
// operators and after commas, tables and argument lists on one line when
// they fit the column width and expanded one item per line otherwise,
// blank-line groups collapsed to one, comments where they were.

type printer struct {
	toks []tok
	opt  *LuaOptions
	// used marks tokens whose comments are printed.
	used   []bool
	buf    []byte
	indent int
	col    int
	// needNL is set after a line comment: the next text starts a line.
	needNL bool
	// flat is the measuring mode: nothing breaks, a line comment or an
	// expanded construct fails the measure, and no comment is marked used.
	flat   bool
	failed bool
	// hugs lets a flat measure pass a table or a function that breaks
	// inside: it measures the opening line and goes on at the column of
	// the closing line; broke tells that one did.
	hugs, broke bool
}

// formatLua formats one chunk; ok is false when the formatter's own
// parser does not accept it.
func formatLua(src string, opt *LuaOptions) (string, error) {
	toks := lexChunk(src)
	b, err := parseChunk(toks)
	if err != nil {
		return "", err
	}
	p := &printer{toks: toks, opt: opt, used: make([]bool, len(toks)), indent: -1}
	p.block(b, true)
	return string(p.buf), nil
}

func (p *printer) indentWidth() int {
	if p.opt.IndentType == "Spaces" {
		return p.opt.IndentWidth
	}
	return p.opt.IndentWidth // a tab counts as indent_width columns, as StyLua counts it
}

func (p *printer) write(s string) {
	if p.failed {
		return
	}
	if p.needNL {
		p.needNL = false
		p.newline()
	}
	p.buf = append(p.buf, s...)
	p.col += len(s)
	if p.flat && p.col > p.opt.ColumnWidth {
		p.failed = true
	}
}

func (p *printer) newline() {
	if p.flat {
		p.failed = true
		return
	}
	p.needNL = false
	if len(p.buf) > 0 {
		p.buf = append(p.buf, '\n')
	}
	p.col = 0
	for i := 0; i < p.indent; i++ {
		if p.opt.IndentType == "Spaces" {
			for j := 0; j < p.opt.IndentWidth; j++ {
				p.buf = append(p.buf, ' ')
			}
		} else {
			p.buf = append(p.buf, '\t')
		}
		p.col += p.indentWidth()
	}
}

func (p *printer) blankLine() {
	if !p.flat && len(p.buf) > 0 {
		p.buf = append(p.buf, '\n')
	}
}

// comments prints the unprinted comments before token i inline.
func (p *printer) comments(i int) {
	if p.used[i] {
		return
	}
	for _, c := range p.toks[i].pre {
		if p.flat {
			if c.line || strings.Contains(c.text, "\n") {
				p.failed = true
				return
			}
			p.write(c.text)
			p.write(" ")
			continue
		}
		if c.nl > 0 && p.col > p.indent*p.indentWidth() {
			p.newline()
		}
		p.write(c.text)
		if c.line {
			p.needNL = true
		} else {
			p.write(" ")
		}
	}
	if !p.flat {
		p.used[i] = true
	}
}

// tok prints token i with the comments before it.
func (p *printer) tok(i int) {
	p.comments(i)
	p.write(p.toks[i].text)
}

// skip drops token i (a semicolon, a redundant parenthesis) but keeps
// its comments.
func (p *printer) skip(i int) { p.comments(i) }

// trailing prints the comments before token i that are on the line just
// printed.
func (p *printer) trailing(i int) {
	if p.flat || p.used[i] {
		return
	}
	t := &p.toks[i]
	k := 0
	for ; k < len(t.pre) && t.pre[k].nl == 0; k++ {
		p.write(" " + t.pre[k].text)
	}
	t.pre = t.pre[k:]
	if k > 0 && len(t.pre) == 0 {
		p.used[i] = true
	}
}

// ownLines prints the comments before token i on lines of their own;
// first tells that nothing precedes them in their block.
func (p *printer) ownLines(i int, first bool) bool {
	if p.used[i] {
		return first
	}
	for _, c := range p.toks[i].pre {
		if c.nl >= 2 && !first {
			p.blankLine()
		}
		p.newline()
		p.write(c.text)
		first = false
	}
	p.used[i] = true
	return first
}

// fits reports whether f prints flat from the current column within the
// column width.
func (p *printer) fits(f func(q *printer)) bool {
	q := &printer{toks: p.toks, opt: p.opt, used: p.used, flat: true, col: p.col, indent: p.indent, buf: make([]byte, 0, 64)}
	f(q)
	return !q.failed
}

func (p *printer) block(b *block, top bool) {
	p.indent++
	first := true
	if top {
	} else if len(b.stmts) > 0 {
		p.trailing(b.stmts[0].first)
	} else {
		p.trailing(b.end)
	}
	for _, s := range b.stmts {
		first = p.ownLines(s.first, first)
		if !first && p.toks[s.first].nl >= 2 {
			p.blankLine()
		}
		first = false
		p.newline()
		p.stmt(s.node)
		next := s.last + 1
		if s.semi >= 0 {
			p.skip(s.semi)
			next = s.semi + 1
		}
		p.trailing(next)
	}
	p.ownLines(b.end, first)
	p.indent--
}

// empty reports whether a block has no statement and no comment.
func (p *printer) empty(b *block) bool {
	return len(b.stmts) == 0 && (p.used[b.end] || len(p.toks[b.end].pre) == 0)
}

// body prints a block and the token that closes it on its own line.
func (p *printer) body(b *block, end int) {
	if p.flat {
		if p.hugs {
			// A comment after the opening line counts against its width.
			first := b.end
			if len(b.stmts) > 0 {
				first = b.stmts[0].first
			}
			if !p.used[first] {
				for _, c := range p.toks[first].pre {
					if c.nl > 0 {
						break
					}
					p.write(" " + c.text)
				}
			}
			p.col = p.indent*p.indentWidth() + len(p.toks[end].text)
			p.broke = true
			return
		}
		p.failed = true
		return
	}
	p.block(b, false)
	p.newline()
	p.tok(end)
}

func (p *printer) stmt(n any) {
	switch s := n.(type) {
	case localStmt:
		p.write("local ")
		p.names(s.names, s.commas)
		if s.eq >= 0 {
			p.write(" ")
			p.tok(s.eq)
			p.write(" ")
			p.values(s.values)
		}
	case assignStmt:
		p.list(s.targets)
		p.write(" ")
		p.tok(s.eq)
		p.write(" ")
		p.values(s.values)
	case callStmt:
		p.expr(s.call)
	case doStmt:
		p.write("do")
		p.body(s.body, s.body.end)
	case whileStmt:
		p.write("while ")
		p.expr(s.cond)
		p.write(" ")
		p.tok(s.do)
		p.body(s.body, s.body.end)
	case repeatStmt:
		p.write("repeat")
		p.body(s.body, s.until)
		p.write(" ")
		p.expr(s.cond)
	case ifStmt:
		for k := range s.conds {
			if k > 0 {
				p.newline()
			}
			p.tok(s.kw[k])
			p.write(" ")
			p.expr(s.conds[k])
			p.write(" ")
			p.tok(s.thens[k])
			p.block(s.bodies[k], false)
		}
		if s.elseT >= 0 {
			p.newline()
			p.tok(s.elseT)
			p.block(s.elseBody, false)
			p.newline()
			p.tok(s.elseBody.end)
		} else {
			p.newline()
			p.tok(s.bodies[len(s.bodies)-1].end)
		}
	case numFor:
		p.write("for ")
		p.tok(s.name)
		p.write(" ")
		p.tok(s.eq)
		p.write(" ")
		p.expr(s.start)
		p.tok(s.comma1)
		p.write(" ")
		p.expr(s.stop)
		if s.comma2 >= 0 {
			p.tok(s.comma2)
			p.write(" ")
			p.expr(s.step)
		}
		p.write(" ")
		p.tok(s.do)
		p.body(s.body, s.body.end)
	case genFor:
		p.write("for ")
		p.names(s.names, s.ncomma)
		p.write(" ")
		p.tok(s.in)
		p.write(" ")
		p.list(s.values)
		p.write(" ")
		p.tok(s.do)
		p.body(s.body, s.body.end)
	case funcStmt:
		p.write("function ")
		for _, t := range s.path {
			p.tok(t)
		}
		p.funcBody(s.body)
	case localFunc:
		p.write("local ")
		p.tok(s.fn)
		p.write(" ")
		p.tok(s.name)
		p.funcBody(s.body)
	case returnStmt:
		p.write("return")
		if len(s.values.xs) > 0 {
			p.write(" ")
			p.values(s.values)
		}
	case breakStmt:
		p.write("break")
	}
}

// stmt's first token is printed by the keyword writes above; its
// comments were printed by the block.

func (p *printer) names(ts, commas []int) {
	for k, t := range ts {
		if k > 0 {
			p.tok(commas[k-1])
			p.write(" ")
		}
		p.tok(t)
	}
}

func (p *printer) list(l exprList) {
	for k, x := range l.xs {
		if k > 0 {
			p.tok(l.commas[k-1])
			p.write(" ")
		}
		p.expr(x)
	}
}

// values prints the right-hand side of an assignment or a return; a
// single operator chain that does not fit is hung at its operators of
// lowest precedence.
func (p *printer) values(l exprList) {
	if !p.flat && len(l.xs) == 1 {
		if c, ok := l.xs[0].(*chain); ok && !p.fits(func(q *printer) { q.expr(c) }) {
			p.hang(c)
			return
		}
	}
	p.list(l)
}

func (p *printer) hang(c *chain) {
	low := 100
	for _, op := range c.ops {
		if pr := binop(p.toks[op].text); pr < low {
			low = pr
		}
	}
	p.expr(c.xs[0])
	p.indent++
	for k, op := range c.ops {
		if binop(p.toks[op].text) == low {
			p.newline()
		} else {
			p.write(" ")
		}
		p.tok(op)
		p.write(" ")
		p.expr(c.xs[k+1])
	}
	p.indent--
}

func (p *printer) funcBody(f *funcBody) {
	p.tok(f.open)
	p.names(f.params, f.commas)
	p.tok(f.close)
	if p.empty(f.body) {
		p.write(" ")
		p.tok(f.end)
		return
	}
	p.body(f.body, f.end)
}

func (p *printer) expr(e expr) {
	if p.failed {
		return
	}
	switch x := e.(type) {
	case *atom:
		p.atom(x.t)
	case *paren:
		if p.redundant(x) {
			p.skip(x.open)
			p.expr(x.x)
			p.skip(x.close)
			return
		}
		p.tok(x.open)
		p.expr(x.x)
		p.tok(x.close)
	case *unary:
		p.tok(x.op)
		switch p.toks[x.op].text {
		case "not":
			p.write(" ")
		case "-":
			if startsWithMinus(x.x, p.toks) {
				p.write("(")
				p.expr(x.x)
				p.write(")")
				return
			}
		}
		p.expr(x.x)
	case *chain:
		p.expr(x.xs[0])
		for k, op := range x.ops {
			p.write(" ")
			p.tok(op)
			p.write(" ")
			p.expr(x.xs[k+1])
		}
	case *suffixed:
		p.expr(x.base)
		for _, s := range x.sfx {
			switch s.kind {
			case sfxDot:
				p.tok(s.t)
				p.tok(s.name)
			case sfxIndex:
				p.tok(s.t)
				p.expr(s.index)
				p.tok(s.close)
			case sfxMethod:
				p.tok(s.t)
				p.tok(s.name)
				p.args(s.args)
			case sfxCall:
				p.args(s.args)
			}
		}
	case *funcExpr:
		p.tok(x.fn)
		p.funcBody(x.body)
	case *table:
		p.table(x)
	}
}

// redundant reports whether parentheses around a name or a literal can
// go, as StyLua drops them; around a prefix of a call or an index they
// stay (("x"):rep(2)), as do those around a vararg or a call, which
// truncate to one value.
func (p *printer) redundant(x *paren) bool {
	switch in := x.x.(type) {
	case *atom:
		t := p.toks[in.t]
		return t.text != "..." && t.kind != luatok.String
	case *paren:
		return true
	}
	return false
}

func startsWithMinus(e expr, toks []tok) bool {
	for {
		switch x := e.(type) {
		case *unary:
			return toks[x.op].text == "-"
		case *chain:
			e = x.xs[0]
		case *paren:
			return false
		default:
			return false
		}
	}
}

func (p *printer) atom(i int) {
	t := &p.toks[i]
	if t.kind == luatok.String {
		p.comments(i)
		p.write(requote(t.text, p.opt.QuoteStyle))
		return
	}
	p.tok(i)
}

// requote rewrites a quoted string in the configured quote style, as
// StyLua does: AutoPreferDouble uses double quotes unless the string
// holds more double quotes than single ones. Escapes other than of
// quotes are kept as written; long strings are never changed.
func requote(raw, style string) string {
	if len(raw) < 2 || (raw[0] != '"' && raw[0] != '\'') || raw[len(raw)-1] != raw[0] {
		return raw
	}
	body := raw[1 : len(raw)-1]
	singles, doubles := 0, 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) {
			i++
			c = body[i]
		}
		switch c {
		case '\'':
			singles++
		case '"':
			doubles++
		}
	}
	q := byte('"')
	switch style {
	case "ForceSingle":
		q = '\''
	case "ForceDouble":
	case "AutoPreferSingle":
		if singles <= doubles {
			q = '\''
		}
	default:
		if doubles > singles {
			q = '\''
		}
	}
	if q == raw[0] && !strings.Contains(body, "\\'") && !strings.Contains(body, "\\\"") {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw) + 4)
	b.WriteByte(q)
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) {
			n := body[i+1]
			i++
			if n == '\'' || n == '"' {
				if n == q {
					b.WriteByte('\\')
				}
				b.WriteByte(n)
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(n)
			continue
		}
		if c == q {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte(q)
	return b.String()
}

func (p *printer) args(a *args) {
	switch a.kind {
	case argsString:
		if p.opt.CallParentheses == "None" || p.opt.CallParentheses == "NoSingleString" || p.opt.CallParentheses == "Input" {
			p.write(" ")
			p.atom(a.str)
			return
		}
		p.write("(")
		p.atom(a.str)
		p.write(")")
		return
	case argsTable:
		if p.opt.CallParentheses == "None" || p.opt.CallParentheses == "NoSingleTable" || p.opt.CallParentheses == "Input" {
			p.write(" ")
			p.table(a.table)
			return
		}
		p.write("(")
		p.table(a.table)
		p.write(")")
		return
	}
	if len(a.list) == 1 && len(p.toks[a.open].pre) == 0 && len(p.toks[a.close].pre) == 0 {
		cp := p.opt.CallParentheses
		switch x := a.list[0].(type) {
		case *atom:
			if p.toks[x.t].kind == luatok.String && (cp == "None" || cp == "NoSingleString") {
				p.write(" ")
				p.atom(x.t)
				return
			}
		case *table:
			if cp == "None" || cp == "NoSingleTable" {
				p.write(" ")
				p.table(x)
				return
			}
		}
	}
	flat := func(q *printer) {
		q.tok(a.open)
		q.list(exprList{a.list, a.commas})
		q.tok(a.close)
	}
	if p.flat || len(a.list) == 0 {
		flat(p)
		return
	}
	if p.fits(flat) {
		flat(p)
		return
	}
	if p.fits(func(q *printer) { q.hugs = true; flat(q); q.failed = q.failed || !q.broke }) {
		flat(p) // in the normal mode: tables and functions break inside
		return
	}
	p.tok(a.open)
	p.indent++
	for k, x := range a.list {
		first := exprFirst(x)
		p.ownLines(first, k == 0)
		p.newline()
		p.expr(x)
		if k < len(a.commas) {
			p.tok(a.commas[k])
			p.trailing(a.commas[k] + 1)
		} else {
			p.trailing(a.close)
		}
	}
	p.ownLines(a.close, false)
	p.indent--
	p.newline()
	p.tok(a.close)
}

// exprFirst is the first token of an expression.
func exprFirst(e expr) int {
	switch x := e.(type) {
	case *atom:
		return x.t
	case *paren:
		return x.open
	case *unary:
		return x.op
	case *chain:
		return exprFirst(x.xs[0])
	case *suffixed:
		return exprFirst(x.base)
	case *funcExpr:
		return x.fn
	case *table:
		return x.open
	}
	return 0
}

func (p *printer) field(f *field) {
	switch f.kind {
	case fieldName:
		p.tok(f.name)
		p.write(" ")
		p.tok(f.eq)
		p.write(" ")
	case fieldIndex:
		p.tok(f.name)
		p.expr(f.key)
		p.tok(f.close)
		p.write(" ")
		p.tok(f.eq)
		p.write(" ")
	}
	p.expr(f.value)
}

func (p *printer) table(t *table) {
	if len(t.fields) == 0 {
		p.tok(t.open)
		p.tok(t.close)
		return
	}
	flat := func(q *printer) {
		q.tok(t.open)
		q.write(" ")
		for k := range t.fields {
			f := &t.fields[k]
			if k > 0 {
				q.write(", ")
			}
			q.field(f)
			if f.sep >= 0 {
				q.skip(f.sep)
			}
		}
		q.write(" ")
		q.tok(t.close)
	}
	if p.flat {
		multiline := p.toks[t.fields[0].first].nl > 0 || (len(p.toks[t.fields[0].first].pre) > 0 && p.toks[t.fields[0].first].pre[0].nl > 0)
		if p.hugs && (multiline || !p.fits(flat)) {
			p.tok(t.open)
			p.col = p.indent*p.indentWidth() + 1
			p.broke = true
			return
		}
		if multiline {
			p.failed = true
			return
		}
		flat(p)
		return
	}
	ft := &p.toks[t.fields[0].first]
	multiline := !p.used[t.fields[0].first] && len(ft.pre) > 0 && ft.pre[0].nl > 0 || ft.nl > 0 && (p.used[t.fields[0].first] || len(ft.pre) == 0)
	if !multiline && p.fits(flat) {
		flat(p)
		return
	}
	p.tok(t.open)
	p.indent++
	for k := range t.fields {
		f := &t.fields[k]
		p.ownLines(f.first, k == 0)
		if k > 0 && p.toks[f.first].nl >= 2 {
			p.blankLine()
		}
		p.newline()
		p.field(f)
		next := t.close
		if f.sep >= 0 {
			p.skip(f.sep)
			next = f.sep + 1
		} else if k+1 < len(t.fields) {
			next = t.fields[k+1].first
		}
		p.write(",")
		p.trailing(next)
	}
	p.ownLines(t.close, false)
	p.indent--
	p.newline()
	p.tok(t.close)
}
