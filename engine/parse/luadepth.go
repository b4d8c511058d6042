package parse

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/luatok"
)

// levelError is syntaxLevels' error: chunk line and column (1-based) and
// length of the token past the limit.
type levelError struct {
	line, col, n int
	msg          string
}

func (e *levelError) Error() string { return e.msg }

// MaxSyntaxLevels is how deeply a chunk may nest brackets, blocks and
// right-associative operators (docs/language.md#limits). Lua 5.1 stops at
// the same count ("chunk has too many syntax levels"); gopher-lua has no
// limit, and its parser stack grows by about a kilobyte per pending
// operand of a `..` chain.
const MaxSyntaxLevels = 200

// syntaxLevels returns an error at the first token of src nested deeper
// than MaxSyntaxLevels, counting one level per open bracket or block and
// one per `..`, `^`, `not` and `#` pending in an expression. Each counts
// at least one level in Lua 5.1 too, so a chunk Lua 5.1 compiles passes.
func syntaxLevels(src string) error {
	if !mayNestDeep(src) {
		return nil
	}
	toks := luatok.Lex(src, 0, 1)
	type level struct{ chain int }
	stack := []level{{}}
	chains := 0      // sum of the chains on the stack
	loopDo := 0      // `while`/`for` headers whose `do` opens no extra level
	operand := false // the previous token ends an operand
	for _, t := range toks {
		top := &stack[len(stack)-1]
		resetChain := func() { chains -= top.chain; top.chain = 0 }
		push, pop := false, false
		endsOperand := false
		switch t.Kind {
		case luatok.String, luatok.Number:
			if operand && t.Kind == luatok.Number {
				resetChain() // juxtaposed operands: a new statement
			}
			endsOperand = true
		case luatok.Name:
			switch t.Value {
			case "function", "if", "repeat":
				push = true
			case "while", "for":
				push = true
				loopDo++
			case "do":
				if loopDo > 0 {
					loopDo--
				} else {
					push = true
				}
			case "end", "until":
				pop = true
			case "not":
				top.chain++
				chains++
			case "nil", "true", "false", "self":
				if operand {
					resetChain()
				}
				endsOperand = true
			case "and", "or", "local", "return", "then", "else", "elseif", "in", "break", "goto":
				resetChain()
			default:
				if operand {
					resetChain() // juxtaposed operands: a new statement
				}
				endsOperand = true
			}
		case luatok.Op:
			switch t.Value {
			case "(", "[", "{":
				push = true
			case ")", "]", "}":
				pop = true
				endsOperand = true
			case "..", "^", "#":
				top.chain++
				chains++
			case "=", ",", ";", "==", "~=", "<", ">", "<=", ">=", "::":
				resetChain()
			}
		}
		if push {
			stack = append(stack, level{})
		} else if pop && len(stack) > 1 {
			chains -= stack[len(stack)-1].chain
			stack = stack[:len(stack)-1]
			if t.Value == "end" || t.Value == "until" {
				// A block ends a statement.
				outer := &stack[len(stack)-1]
				chains -= outer.chain
				outer.chain = 0
			}
		}
		operand = endsOperand
		if d := len(stack) - 1 + chains; d > MaxSyntaxLevels {
			line, col := 1, 1
			for i := 0; i < t.Span.Start && i < len(src); i++ {
				col++
				if src[i] == '\n' {
					line, col = line+1, 1
				}
			}
			return &levelError{line: line, col: col, n: max(1, t.Span.End-t.Span.Start),
				msg: fmt.Sprintf("chunk has too many syntax levels (more than %d nested brackets, blocks and `..`, `^`, `not`, `#` in one expression): split it, e.g. collect the parts in a table and join them with table.concat", MaxSyntaxLevels)}
		}
	}
	return nil
}

// mayNestDeep is a quick test that src holds enough of what opens a
// level to exceed MaxSyntaxLevels: the bytes ( [ { ^ # . and the words
// function, repeat, then, do and not, wherever they occur. It runs on
// every chunk, so it is one pass over src.
func mayNestDeep(src string) bool {
	n := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if nestByte[c] {
			n++
		} else if kw := nestWord[c]; kw != "" && i+1 < len(src) && src[i+1] == kw[1] && strings.HasPrefix(src[i:], kw) {
			n++
		}
	}
	return n > MaxSyntaxLevels
}

// nestByte holds the bytes that may open a level (`..` has two dots),
// nestWord the words that may, by their first letter.
var (
	nestByte = [256]bool{'(': true, '[': true, '{': true, '^': true, '#': true, '.': true}
	nestWord = [256]string{'f': "function", 'r': "repeat", 't': "then", 'd': "do", 'n': "not"}
)
