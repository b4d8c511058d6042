package loop

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// Dialects (docs/language.md#dialects). Prompts never name one; the catalog entry of
// the bound model does.
const (
	DialectOpenAI = "openai"
	DialectGemma  = "gemma3_tool_code"
)

// gemmaContinue ends every emulated tool-result message.
const gemmaContinue = "Continue: call more tools with a tool_code block if you need them, otherwise give your final answer as plain text."

// gemmaGuide is the system message that teaches the emulated protocol.
func gemmaGuide(scope []Binding) string {
	var b strings.Builder
	b.WriteString("You can call tools. To call tools, reply with nothing but one fenced block:\n\n```tool_code\ntool_name(argument=value, other=value)\n```\n\n")
	b.WriteString("Write one call per line. Values are literals: \"strings\", numbers, true/false, null, [lists] and {\"objects\"}. ")
	b.WriteString("Tool results come back in a message starting with TOOL RESULT. When you can answer, reply with plain text and no tool_code block.\n\nTools:\n")
	for _, t := range scope {
		fmt.Fprintf(&b, "\n- %s: %s\n  parameters (JSON Schema): %s\n", t.Alias, t.Description, compactJSON(t.Parameters))
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// gemmaCalls extracts the calls of a reply that is a tool_code fence. ok
// is false when the reply is not a fence (plain text); err is set for a
// fence that cannot be parsed.
func gemmaCalls(content string) (calls []gateway.ToolCall, ok bool, err error) {
	s := strings.TrimSpace(content)
	if !strings.HasPrefix(s, "```tool_code") {
		return nil, false, nil
	}
	body := strings.TrimPrefix(s, "```tool_code")
	end := strings.LastIndex(body, "```")
	if end < 0 || strings.TrimSpace(body[end+3:]) != "" {
		return nil, true, fmt.Errorf("tool_code fence is not closed")
	}
	body = body[:end]
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, args, perr := parseCall(line)
		if perr != nil {
			return nil, true, fmt.Errorf("tool_code line %q: %v", line, perr)
		}
		calls = append(calls, gateway.ToolCall{ID: fmt.Sprintf("call_tool_code_%d", len(calls)+1), Type: "function",
			Function: gateway.FunctionCall{Name: name, Arguments: args}})
	}
	if len(calls) == 0 {
		return nil, true, fmt.Errorf("tool_code fence holds no call")
	}
	return calls, true, nil
}

// parseCall parses name(k=v, ...) into the name and a JSON object text.
func parseCall(line string) (string, string, error) {
	open := strings.IndexByte(line, '(')
	if open <= 0 || !strings.HasSuffix(line, ")") {
		return "", "", fmt.Errorf("expected name(argument=value, ...)")
	}
	name := strings.TrimSpace(line[:open])
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.') {
			return "", "", fmt.Errorf("invalid tool name %q", name)
		}
	}
	p := &litParser{s: line[open+1 : len(line)-1]}
	args := map[string]any{}
	for {
		p.space()
		if p.eof() {
			break
		}
		key := p.ident()
		if key == "" {
			return "", "", fmt.Errorf("expected an argument name at %q", p.rest())
		}
		p.space()
		if !p.eat('=') {
			return "", "", fmt.Errorf("expected = after %s", key)
		}
		v, err := p.value()
		if err != nil {
			return "", "", err
		}
		if _, dup := args[key]; dup {
			return "", "", fmt.Errorf("argument %s given twice", key)
		}
		args[key] = v
		p.space()
		if p.eof() {
			break
		}
		if !p.eat(',') {
			return "", "", fmt.Errorf("expected , at %q", p.rest())
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "", "", err
	}
	return name, string(b), nil
}

// litParser reads JSON values plus the Python spellings a model trained
// on Python may use (True/False/None, single quotes).
type litParser struct {
	s string
	i int
}

func (p *litParser) eof() bool    { return p.i >= len(p.s) }
func (p *litParser) rest() string { return p.s[p.i:] }
func (p *litParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}
func (p *litParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}
func (p *litParser) ident() string {
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= 'A' && p.s[p.i] <= 'Z' || p.i > start && p.s[p.i] >= '0' && p.s[p.i] <= '9') {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *litParser) value() (any, error) {
	p.space()
	if p.eof() {
		return nil, fmt.Errorf("missing value")
	}
	switch c := p.s[p.i]; {
	case c == '"' || c == '\'':
		return p.str(c)
	case c == '[':
		p.i++
		var out []any
		for {
			if p.eat(']') {
				if out == nil {
					out = []any{}
				}
				return out, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			if !p.eat(',') && !p.eat(']') {
				return nil, fmt.Errorf("expected , or ] in list")
			} else if p.s[p.i-1] == ']' {
				return out, nil
			}
		}
	case c == '{':
		p.i++
		out := map[string]any{}
		for {
			if p.eat('}') {
				return out, nil
			}
			p.space()
			if p.eof() || (p.s[p.i] != '"' && p.s[p.i] != '\'') {
				return nil, fmt.Errorf("object keys must be strings")
			}
			k, err := p.str(p.s[p.i])
			if err != nil {
				return nil, err
			}
			if !p.eat(':') {
				return nil, fmt.Errorf("expected : in object")
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out[k] = v
			if !p.eat(',') && !p.eat('}') {
				return nil, fmt.Errorf("expected , or } in object")
			} else if p.s[p.i-1] == '}' {
				return out, nil
			}
		}
	default:
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(",)]} \t", rune(p.s[p.i])) {
			p.i++
		}
		word := p.s[start:p.i]
		switch word {
		case "true", "True":
			return true, nil
		case "false", "False":
			return false, nil
		case "null", "None":
			return nil, nil
		}
		f, err := strconv.ParseFloat(word, 64)
		if err != nil {
			return nil, fmt.Errorf("unknown value %q", word)
		}
		return f, nil
	}
}

func (p *litParser) str(q byte) (string, error) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			p.i++
			switch e := p.s[p.i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if p.i+4 < len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i+1:p.i+5], 16, 32); err == nil {
						b.WriteRune(rune(r))
						p.i += 4
						break
					}
				}
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
		p.i++
	}
	return "", fmt.Errorf("unterminated string")
}

// gemmaResults is the user message echoing a batch's results.
func gemmaResults(calls []gateway.ToolCall, results []string) string {
	var b strings.Builder
	for i, c := range calls {
		fmt.Fprintf(&b, "TOOL RESULT %s (%s):\n%s\n\n", c.Function.Name, c.ID, results[i])
	}
	b.WriteString(gemmaContinue)
	return b.String()
}
