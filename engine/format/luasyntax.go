package format

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/luatok"
)

// This file builds the formatter's concrete syntax tree of a Lua chunk
// from the project's tokenizer (engine/luatok): gopher-lua's tree has no
// comments, parentheses or quote styles, which a formatter must keep.
// The tree records token indexes, so the printer reads each token's
// source text and the comments before it.

// comment is a Lua comment met between two tokens.
type comment struct {
	text string // without trailing white space
	// nl is the number of line breaks between what precedes the comment
	// (a token or a comment) and the comment.
	nl int
	// line is true for a `--` comment that runs to the end of its line.
	line bool
	// end is the comment's end offset in the text trivia was given.
	end int
}

// tok is one token of the chunk with the comments before it.
type tok struct {
	kind luatok.Kind
	text string // source text
	// nl is the number of line breaks between the last comment (or the
	// previous token) and this token.
	nl  int
	pre []comment
	// start and end are the token's offsets in the chunk's source.
	start, end int
}

// lexChunk tokenises src and attaches comments; the last token is an
// end-of-chunk marker holding the trailing comments.
func lexChunk(src string) []tok {
	lt := luatok.Lex(src, 0, 1)
	toks := make([]tok, 0, len(lt)+1)
	prev := 0
	for _, t := range lt {
		pre, nl := trivia(src[prev:t.Span.Start])
		for k := range pre {
			pre[k].end += prev
		}
		toks = append(toks, tok{kind: t.Kind, text: src[t.Span.Start:t.Span.End], nl: nl, pre: pre, start: t.Span.Start, end: t.Span.End})
		prev = t.Span.End
	}
	pre, nl := trivia(src[prev:])
	for k := range pre {
		pre[k].end += prev
	}
	return append(toks, tok{kind: eofKind, nl: nl, pre: pre, start: len(src), end: len(src)})
}

const eofKind luatok.Kind = 255

// trivia splits the text between two tokens into comments; nl is the
// number of line breaks after the last comment.
func trivia(s string) (cs []comment, nl int) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			nl++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			start := i
			j := i + 2
			line := true
			if lv := longLevel(s, j); lv >= 0 {
				closer := "]" + strings.Repeat("=", lv) + "]"
				if k := strings.Index(s[j:], closer); k >= 0 {
					i = j + k + len(closer)
					line = false
				} else {
					i = len(s)
					line = false
				}
			} else if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
				i += k
			} else {
				i = len(s)
			}
			text := s[start:i]
			if line {
				text = strings.TrimRight(text, " \t\r\f\v")
			}
			cs = append(cs, comment{text: text, nl: nl, line: line, end: i})
			nl = 0
		default:
			i++ // not reached for tokenizer gaps
		}
	}
	return cs, nl
}

// longLevel is the level of a long bracket opening at s[i:], or -1.
func longLevel(s string, i int) int {
	if i >= len(s) || s[i] != '[' {
		return -1
	}
	j := i + 1
	for j < len(s) && s[j] == '=' {
		j++
	}
	if j < len(s) && s[j] == '[' {
		return j - i - 1
	}
	return -1
}

// Syntax tree. Fields named with a t hold token indexes (-1: absent).

type expr interface{}

type (
	atom  struct{ t int } // name, number, string, nil, true, false, ...
	paren struct {
		open  int
		x     expr
		close int
	}
	unary struct {
		op int
		x  expr
	}
	// chain is operands joined by binary operators, in source order.
	chain struct {
		xs  []expr
		ops []int
	}
	// suffixed is a prefix expression with field, index, method and call
	// suffixes.
	suffixed struct {
		base expr
		sfx  []suffix
	}
	funcExpr struct {
		fn   int
		body *funcBody
	}
	table struct {
		open   int
		fields []field
		close  int
	}
)

type suffixKind uint8

const (
	sfxDot    suffixKind = iota // .name
	sfxIndex                    // [x]
	sfxCall                     // args
	sfxMethod                   // :name args
)

type suffix struct {
	kind  suffixKind
	t     int // '.', '[' or ':'
	name  int // name token of . and :
	index expr
	close int // ']'
	args  *args
}

type argsKind uint8

const (
	argsParen argsKind = iota
	argsString
	argsTable
)

type args struct {
	kind   argsKind
	open   int
	list   []expr
	commas []int
	close  int
	str    int
	table  *table
}

type fieldKind uint8

const (
	fieldPos   fieldKind = iota // value
	fieldName                   // name = value
	fieldIndex                  // [key] = value
)

type field struct {
	kind  fieldKind
	first int // first token
	name  int // name token, or '['
	key   expr
	close int // ']'
	eq    int
	value expr
	sep   int // ',' or ';' after the field, or -1
}

type funcBody struct {
	open   int
	params []int // names and ...
	commas []int
	close  int
	body   *block
	end    int
}

type block struct {
	stmts []stmt
	// end is the token after the block (end, else, elseif, until, EOF).
	end int
}

type stmt struct {
	first, last int // token range, semicolon excluded
	semi        int // a `;` after the statement, or -1
	node        any
}

type (
	localStmt struct {
		names  []int
		commas []int
		eq     int
		values exprList
	}
	assignStmt struct {
		targets exprList
		eq      int
		values  exprList
	}
	callStmt  struct{ call expr }
	doStmt    struct{ body *block }
	whileStmt struct {
		cond expr
		do   int
		body *block
	}
	repeatStmt struct {
		body  *block
		until int
		cond  expr
	}
	ifStmt struct {
		// kw are the if/elseif tokens, conds and thens their conditions
		// and then tokens.
		kw, thens []int
		conds     []expr
		bodies    []*block
		elseT     int
		elseBody  *block
	}
	numFor struct {
		name, eq    int
		start, stop expr
		comma1      int
		comma2      int // -1 without a step
		step        expr
		do          int
		body        *block
	}
	genFor struct {
		names  []int
		ncomma []int
		in     int
		values exprList
		do     int
		body   *block
	}
	funcStmt struct {
		// path holds the name tokens and the separators (. and :).
		path []int
		body *funcBody
	}
	localFunc struct {
		fn, name int
		body     *funcBody
	}
	returnStmt struct{ values exprList }
	breakStmt  struct{}
)

type exprList struct {
	xs     []expr
	commas []int
}

// parser is a recursive-descent parser of Lua 5.1 over toks.
type parser struct {
	toks  []tok
	pos   int
	depth int
}

type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

func (p *parser) fail(format string, a ...any) {
	panic(&syntaxError{fmt.Sprintf(format, a...)})
}

// parseChunk parses a whole chunk. Chunks reach the formatter only after
// gopher-lua accepted them, so an error here means the formatter does not
// know a construct: the chunk is then left as written.
func parseChunk(toks []tok) (b *block, err error) {
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*syntaxError)
			if !ok {
				panic(r)
			}
			err = se
		}
	}()
	p := &parser{toks: toks}
	b = p.block()
	if p.toks[p.pos].kind != eofKind {
		p.fail("unexpected %q", p.toks[p.pos].text)
	}
	return b, nil
}

func (p *parser) peek() *tok { return &p.toks[p.pos] }

func (p *parser) is(text string) bool {
	t := &p.toks[p.pos]
	return t.kind != eofKind && t.kind != luatok.String && t.text == text
}

func (p *parser) isKw(text string) bool {
	t := &p.toks[p.pos]
	return t.kind == luatok.Name && t.text == text
}

func (p *parser) next() int {
	if p.toks[p.pos].kind == eofKind {
		p.fail("unexpected end of chunk")
	}
	p.pos++
	return p.pos - 1
}

func (p *parser) expect(text string) int {
	if !p.is(text) {
		p.fail("expected %q, found %q", text, p.toks[p.pos].text)
	}
	return p.next()
}

func (p *parser) name() int {
	t := p.peek()
	if t.kind != luatok.Name || keyword(t.text) {
		p.fail("expected a name, found %q", t.text)
	}
	return p.next()
}

func keyword(s string) bool {
	switch s {
	case "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
		"local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while":
		return true
	}
	return false
}

func (p *parser) enter() {
	p.depth++
	if p.depth > 400 {
		p.fail("nesting too deep")
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) blockEnd() bool {
	t := p.peek()
	if t.kind == eofKind {
		return true
	}
	if t.kind != luatok.Name {
		return false
	}
	switch t.text {
	case "end", "else", "elseif", "until":
		return true
	}
	return false
}

func (p *parser) block() *block {
	p.enter()
	defer p.leave()
	b := &block{}
	for !p.blockEnd() {
		first := p.pos
		isReturn := p.isKw("return")
		node := p.statement()
		s := stmt{first: first, last: p.pos - 1, semi: -1, node: node}
		if p.is(";") {
			s.semi = p.next()
		}
		b.stmts = append(b.stmts, s)
		if isReturn || isBreak(node) {
			break
		}
	}
	b.end = p.pos
	return b
}

func isBreak(n any) bool { _, ok := n.(breakStmt); return ok }

func (p *parser) statement() any {
	t := p.peek()
	if t.kind == luatok.Name {
		switch t.text {
		case "local":
			p.next()
			if p.isKw("function") {
				fn := p.next()
				name := p.name()
				return localFunc{fn: fn, name: name, body: p.funcBody()}
			}
			s := localStmt{eq: -1}
			s.names = append(s.names, p.name())
			for p.is(",") {
				s.commas = append(s.commas, p.next())
				s.names = append(s.names, p.name())
			}
			if p.is("=") {
				s.eq = p.next()
				s.values = p.exprList()
			}
			return s
		case "function":
			p.next()
			s := funcStmt{}
			s.path = append(s.path, p.name())
			for p.is(".") {
				s.path = append(s.path, p.next(), p.name())
			}
			if p.is(":") {
				s.path = append(s.path, p.next(), p.name())
			}
			s.body = p.funcBody()
			return s
		case "return":
			p.next()
			s := returnStmt{}
			if !p.blockEnd() && !p.is(";") {
				s.values = p.exprList()
			}
			return s
		case "break":
			p.next()
			return breakStmt{}
		case "do":
			p.next()
			b := p.block()
			p.expect("end")
			return doStmt{body: b}
		case "while":
			p.next()
			s := whileStmt{cond: p.expr()}
			s.do = p.expect("do")
			s.body = p.block()
			p.expect("end")
			return s
		case "repeat":
			p.next()
			s := repeatStmt{body: p.block()}
			s.until = p.expect("until")
			s.cond = p.expr()
			return s
		case "if":
			s := ifStmt{elseT: -1}
			s.kw = append(s.kw, p.next())
			for {
				s.conds = append(s.conds, p.expr())
				s.thens = append(s.thens, p.expect("then"))
				s.bodies = append(s.bodies, p.block())
				if p.isKw("elseif") {
					s.kw = append(s.kw, p.next())
					continue
				}
				break
			}
			if p.isKw("else") {
				s.elseT = p.next()
				s.elseBody = p.block()
			}
			p.expect("end")
			return s
		case "for":
			p.next()
			n1 := p.name()
			if p.is("=") {
				s := numFor{name: n1, comma2: -1}
				s.eq = p.next()
				s.start = p.expr()
				s.comma1 = p.expect(",")
				s.stop = p.expr()
				if p.is(",") {
					s.comma2 = p.next()
					s.step = p.expr()
				}
				s.do = p.expect("do")
				s.body = p.block()
				p.expect("end")
				return s
			}
			s := genFor{names: []int{n1}}
			for p.is(",") {
				s.ncomma = append(s.ncomma, p.next())
				s.names = append(s.names, p.name())
			}
			if !p.isKw("in") {
				p.fail("expected 'in'")
			}
			s.in = p.next()
			s.values = p.exprList()
			s.do = p.expect("do")
			s.body = p.block()
			p.expect("end")
			return s
		}
	}
	first := p.suffixedExpr()
	if p.is("=") || p.is(",") {
		s := assignStmt{}
		s.targets.xs = append(s.targets.xs, first)
		for p.is(",") {
			s.targets.commas = append(s.targets.commas, p.next())
			s.targets.xs = append(s.targets.xs, p.suffixedExpr())
		}
		s.eq = p.expect("=")
		s.values = p.exprList()
		return s
	}
	if sx, ok := first.(*suffixed); !ok || len(sx.sfx) == 0 || sx.sfx[len(sx.sfx)-1].args == nil {
		p.fail("syntax error: a statement must be a call or an assignment")
	}
	return callStmt{call: first}
}

func (p *parser) funcBody() *funcBody {
	f := &funcBody{}
	f.open = p.expect("(")
	for !p.is(")") {
		if p.is("...") {
			f.params = append(f.params, p.next())
			break
		}
		f.params = append(f.params, p.name())
		if !p.is(",") {
			break
		}
		f.commas = append(f.commas, p.next())
	}
	f.close = p.expect(")")
	f.body = p.block()
	f.end = p.expect("end")
	return f
}

func (p *parser) exprList() exprList {
	var l exprList
	l.xs = append(l.xs, p.expr())
	for p.is(",") {
		l.commas = append(l.commas, p.next())
		l.xs = append(l.xs, p.expr())
	}
	return l
}

// binop is the precedence of a binary operator, or 0.
func binop(s string) int {
	switch s {
	case "or":
		return 1
	case "and":
		return 2
	case "<", ">", "<=", ">=", "~=", "==":
		return 3
	case "..":
		return 5
	case "+", "-":
		return 6
	case "*", "/", "%":
		return 7
	case "^":
		return 10
	}
	return 0
}

func (p *parser) isBinop() bool {
	t := p.peek()
	if t.kind == luatok.Op || (t.kind == luatok.Name && (t.text == "and" || t.text == "or")) {
		return binop(t.text) > 0
	}
	return false
}

// expr parses an expression as a chain of operands and binary operators
// in source order: the printer keeps the order, so it needs no tree.
func (p *parser) expr() expr {
	p.enter()
	defer p.leave()
	first := p.operand()
	if !p.isBinop() {
		return first
	}
	c := &chain{xs: []expr{first}}
	for p.isBinop() {
		c.ops = append(c.ops, p.next())
		c.xs = append(c.xs, p.operand())
	}
	return c
}

func (p *parser) operand() expr {
	t := p.peek()
	if (t.kind == luatok.Op && (t.text == "-" || t.text == "#")) || (t.kind == luatok.Name && t.text == "not") {
		p.enter()
		defer p.leave()
		op := p.next()
		return &unary{op: op, x: p.operand()}
	}
	return p.simple()
}

func (p *parser) simple() expr {
	t := p.peek()
	switch t.kind {
	case luatok.Number, luatok.String:
		return &atom{p.next()}
	case luatok.Name:
		switch t.text {
		case "nil", "true", "false":
			return &atom{p.next()}
		case "function":
			fn := p.next()
			return &funcExpr{fn: fn, body: p.funcBody()}
		}
	case luatok.Op:
		switch t.text {
		case "...":
			return &atom{p.next()}
		case "{":
			return p.table()
		}
	}
	return p.suffixedExpr()
}

func (p *parser) primary() expr {
	if p.is("(") {
		p.enter()
		defer p.leave()
		open := p.next()
		x := p.expr()
		return &paren{open: open, x: x, close: p.expect(")")}
	}
	return &atom{p.name()}
}

func (p *parser) suffixedExpr() expr {
	base := p.primary()
	var sfx []suffix
	for {
		t := p.peek()
		switch {
		case t.kind == luatok.Op && t.text == ".":
			d := p.next()
			sfx = append(sfx, suffix{kind: sfxDot, t: d, name: p.name()})
		case t.kind == luatok.Op && t.text == "[":
			o := p.next()
			x := p.expr()
			sfx = append(sfx, suffix{kind: sfxIndex, t: o, index: x, close: p.expect("]")})
		case t.kind == luatok.Op && t.text == ":":
			c := p.next()
			n := p.name()
			sfx = append(sfx, suffix{kind: sfxMethod, t: c, name: n, args: p.args()})
		case t.kind == luatok.String || (t.kind == luatok.Op && (t.text == "(" || t.text == "{")):
			sfx = append(sfx, suffix{kind: sfxCall, t: p.pos, args: p.args()})
		default:
			if len(sfx) == 0 {
				return base
			}
			return &suffixed{base: base, sfx: sfx}
		}
	}
}

func (p *parser) args() *args {
	t := p.peek()
	switch {
	case t.kind == luatok.String:
		return &args{kind: argsString, str: p.next()}
	case t.kind == luatok.Op && t.text == "{":
		return &args{kind: argsTable, table: p.table()}
	}
	a := &args{kind: argsParen, open: p.expect("(")}
	if !p.is(")") {
		l := p.exprList()
		a.list, a.commas = l.xs, l.commas
	}
	a.close = p.expect(")")
	return a
}

func (p *parser) table() *table {
	p.enter()
	defer p.leave()
	t := &table{open: p.expect("{")}
	for !p.is("}") {
		f := field{first: p.pos, name: -1, close: -1, eq: -1, sep: -1}
		switch {
		case p.is("["):
			f.kind = fieldIndex
			f.name = p.next()
			f.key = p.expr()
			f.close = p.expect("]")
			f.eq = p.expect("=")
			f.value = p.expr()
		case p.peek().kind == luatok.Name && !keyword(p.peek().text) && p.toks[p.pos+1].kind == luatok.Op && p.toks[p.pos+1].text == "=":
			f.kind = fieldName
			f.name = p.next()
			f.eq = p.next()
			f.value = p.expr()
		default:
			f.kind = fieldPos
			f.value = p.expr()
		}
		if p.is(",") || p.is(";") {
			f.sep = p.next()
			t.fields = append(t.fields, f)
			continue
		}
		t.fields = append(t.fields, f)
		break
	}
	t.close = p.expect("}")
	return t
}
