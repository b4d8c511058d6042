package parse

import (
	"bytes"
	"fmt"
	"iter"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/source"
	yaml "go.yaml.in/yaml/v3"
)

// FrontmatterKeys lists the accepted top-level keys in documentation order.
var FrontmatterKeys = []string{"name", "description", "promptforge", "max_tool_iterations", "input", "output"}

// IOKeys lists the keys of an input/output mapping.
var IOKeys = []string{"path", "description"}

// splitFrontmatter finds the frontmatter block by lines
// (docs/language.md#frontmatter). It returns
// the number of file lines the block occupies (0 when absent) and adds
// errors. For an unclosed block it recovers by ending the block before the
// first line that starts with '#', so the rest of the file still parses.
func (ps *parser) splitFrontmatter() {
	f := ps.file
	n := f.LineCount()
	first := ps.lineText(1)
	if strings.TrimSpace(first) != "---" {
		ps.errorf(CodeFrontmatter, ps.lineSpan(1),
			"file must begin with a --- frontmatter delimiter: add a frontmatter block (---, name: ..., description: ..., promptforge: 1, ---) at the top")
		ps.fmLines = 0
		return
	}
	fm := &Frontmatter{}
	ps.prompt.Frontmatter = fm
	closeLine := 0
	for l := 2; l <= n; l++ {
		if strings.TrimSpace(ps.lineText(l)) == "---" {
			closeLine = l
			break
		}
	}
	end := closeLine
	if closeLine == 0 {
		ps.errorf(CodeFrontmatter, ps.lineSpan(1), "frontmatter was not closed with ---: add a --- line after the last frontmatter key")
		end = n
		for l := 2; l <= n; l++ {
			if strings.HasPrefix(ps.lineText(l), "#") {
				end = l - 1
				break
			}
		}
	} else {
		fm.Closed = true
	}
	fm.Span = source.Span{Start: f.LineStart(1), End: f.LineEnd(end)}
	if end >= 2 {
		yamlEnd := end
		if closeLine != 0 {
			yamlEnd = end - 1
		}
		if yamlEnd >= 2 {
			fm.YAML = source.Span{Start: f.LineStart(2), End: f.LineEnd(yamlEnd)}
		} else {
			fm.YAML = source.Span{Start: f.LineStart(2), End: f.LineStart(2)}
		}
	} else {
		fm.YAML = source.Span{Start: fm.Span.End, End: fm.Span.End}
	}
	ps.fmLines = end
	ps.fmYAMLLine = 2
	// The decode depends on the frontmatter's lines alone, which an
	// editor's keystroke rarely changes: a clean decode is memoised on
	// them (frontmatters).
	head := ps.file.Content[:fm.Span.End]
	if d := frontmatters.get(head); d != nil {
		d.fill(fm)
		return
	}
	nerr := len(ps.prompt.Errors)
	ps.decodeFrontmatter(fm)
	if len(ps.prompt.Errors) == nerr {
		frontmatters.put(head, fm)
	}
}

// decodedFrontmatter is what decodeFrontmatter found in an error-free
// frontmatter, shared by every parse whose file starts with the same
// text up to the frontmatter's end (its spans are offsets into that
// text). Treat it as immutable, as the Frontmatter it fills.
type decodedFrontmatter struct {
	fields            []*Field
	name, description string
	version           *uint32
	maxToolIterations *int64
	input, output     *IOSpec
}

func (d *decodedFrontmatter) fill(fm *Frontmatter) {
	fm.Fields, fm.Name, fm.Description = d.fields, d.name, d.description
	fm.Version, fm.MaxToolIterations = d.version, d.maxToolIterations
	fm.Input, fm.Output = d.input, d.output
}

// frontmatters memoises the frontmatter decodes of the last files parsed,
// keyed by the file's text up to the frontmatter's end.
var frontmatters = &fmMemo{m: map[string]*decodedFrontmatter{}, maxBytes: 1}

// fmMemoMax bounds the memoised decodes (a frontmatter is a few hundred
// bytes; an editor has one per open prompt).
const fmMemoMax = 256

type fmMemo struct {
	mu sync.Mutex
	m  map[string]*decodedFrontmatter
	// maxBytes is 0 when the caches are off (LimitCaches(0)); the memo
	// is bounded by its entries only.
	maxBytes int
}

func (c *fmMemo) get(head []byte) *decodedFrontmatter {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[string(head)]
}

func (c *fmMemo) put(head []byte, fm *Frontmatter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maxBytes == 0 {
		return
	}
	if len(c.m) >= fmMemoMax {
		clear(c.m)
	}
	c.m[string(head)] = &decodedFrontmatter{fm.Fields, fm.Name, fm.Description, fm.Version, fm.MaxToolIterations, fm.Input, fm.Output}
}

func (c *fmMemo) limit(maxBytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.maxBytes = min(c.maxBytes, max(0, maxBytes))
}

func (c *fmMemo) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// allOf reports whether s is non-empty and every byte of it is ok.
func allOf(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return s != ""
}

func isDec(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool { return isDec(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isOct(c byte) bool { return c >= '0' && c <= '7' }
func isBin(c byte) bool { return c == '0' || c == '1' }

// yamlSpan converts a yaml.v3 node position (1-based line and column, the
// column counted in runes) to a file span covering the node's text on its
// first line.
func (ps *parser) yamlSpan(n *yaml.Node, text string) source.Span {
	line := ps.fmYAMLLine + n.Line - 1
	ls := ps.file.LineStart(line)
	le := ps.file.LineEnd(line)
	lineText := string(ps.file.Content[ls:le])
	col := 0
	for i := range lineText {
		if col == n.Column-1 {
			col = -1
			ls += i
			break
		}
		col++
	}
	if col != -1 {
		ls = le
	}
	end := ls + len(text)
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		end += 2
	}
	if end > le || end <= ls {
		end = le
	}
	return source.Span{Start: ls, End: end}
}

func (ps *parser) decodeFrontmatter(fm *Frontmatter) {
	text := ps.file.Text(fm.YAML)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		msg := err.Error()
		span := fm.YAML
		if m := regexp.MustCompile(`line (\d+)`).FindStringSubmatch(msg); m != nil {
			if l, e := strconv.Atoi(m[1]); e == nil {
				span = ps.lineSpan(ps.fmYAMLLine + l - 1)
			}
		}
		if span.Len() == 0 {
			span = ps.lineSpan(1)
		}
		ps.errorf(CodeFrontmatter, span, "invalid frontmatter: YAML syntax error: %s", strings.TrimPrefix(msg, "yaml: "))
		return
	}
	if len(doc.Content) == 0 {
		ps.errorf(CodeFrontmatter, ps.lineSpan(1), "invalid frontmatter: missing field `name`: add `name: my_prompt` and `description: ...`")
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		ps.errorf(CodeFrontmatter, ps.yamlSpan(root, root.Value), "invalid frontmatter: expected a mapping of keys (name: ..., description: ...)")
		return
	}
	seen := map[string]*Field{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		v = resolveAlias(v)
		fd := ps.field(k, v)
		if prev := seen[fd.Key]; prev != nil {
			l, _ := ps.file.Position(prev.KeySpan.Start)
			ps.errorf(CodeFrontmatter, fd.KeySpan, "invalid frontmatter: duplicate key `%s` (first at line %d): remove one", fd.Key, l)
			continue
		}
		seen[fd.Key] = fd
		fm.Fields = append(fm.Fields, fd)
		switch fd.Key {
		case "name", "description":
			if !fd.Scalar {
				ps.errorf(CodeFrontmatter, fd.ValueSpan, "invalid frontmatter: `%s` must be a string, got a %s", fd.Key, kindName(v))
				continue
			}
			if fd.Key == "name" {
				fm.Name = fd.Value
			} else {
				fm.Description = fd.Value
			}
		case "promptforge":
			if fd.Null {
				continue
			}
			u, ok := ps.intField(fd, v)
			if !ok {
				continue
			}
			if u < 0 || u > math.MaxUint32 {
				ps.errorf(CodeFrontmatter, fd.ValueSpan, "invalid frontmatter: `promptforge` must be a small unsigned integer; use `promptforge: 1`")
				continue
			}
			x := uint32(u)
			fm.Version = &x
		case "max_tool_iterations":
			if fd.Null {
				ps.errorf(CodeFrontmatter, fd.ValueSpan, "invalid frontmatter: `max_tool_iterations` must be an integer from 1 to %d; remove the key to use the default (%d)", rules.MaxToolIterations, rules.DefaultMaxToolIterations)
				continue
			}
			u, ok := ps.intField(fd, v)
			if !ok {
				continue
			}
			if u < 1 {
				ps.errorf(CodeFrontmatter, fd.ValueSpan, "invalid frontmatter: `max_tool_iterations` must be a positive integer (>= 1)")
				continue
			}
			if u > rules.MaxToolIterations {
				ps.errorf(CodeFrontmatter, fd.ValueSpan, "invalid frontmatter: `max_tool_iterations` must be <= %d", rules.MaxToolIterations)
				continue
			}
			fm.MaxToolIterations = &u
		case "input", "output":
			if fd.Null {
				continue
			}
			io := ps.ioSpec(fd, v)
			if fd.Key == "input" {
				fm.Input = io
			} else {
				fm.Output = io
			}
		default:
			if o, ok := api.LookupOld(fd.Key); ok && o.Kind == api.OldFrontmatter {
				ps.errorf(CodeFrontmatter, fd.KeySpan, "invalid frontmatter: `%s` was removed (%s: %s): remove it and end the walk with %s; docs/migration.md", fd.Key, o.Since(), o.Why, o.New)
				continue
			}
			ps.errorf(CodeFrontmatter, fd.KeySpan, "invalid frontmatter: unknown key `%s`%s; accepted keys: %s", fd.Key, didYouMean(fd.Key, FrontmatterKeys), strings.Join(FrontmatterKeys, ", "))
		}
	}
	for _, req := range []string{"name", "description"} {
		if seen[req] == nil {
			ps.errorf(CodeFrontmatter, ps.lineSpan(1), "invalid frontmatter: missing field `%s`: add `%s: ...` to the frontmatter", req, req)
		}
	}
}

func resolveAlias(v *yaml.Node) *yaml.Node {
	for i := 0; v.Kind == yaml.AliasNode && v.Alias != nil && i < 100; i++ {
		v = v.Alias
	}
	return v
}

func kindName(v *yaml.Node) string {
	switch v.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	}
	return "scalar"
}

func (ps *parser) field(k, v *yaml.Node) *Field {
	fd := &Field{Key: k.Value, KeySpan: ps.yamlSpan(k, k.Value)}
	fd.ValueSpan = ps.yamlSpan(v, v.Value)
	if v.Kind == yaml.ScalarNode {
		fd.Scalar = true
		fd.Value = v.Value
		fd.Quoted = v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
		if !fd.Quoted && (v.Tag == "!!null") {
			fd.Null = true
		}
		if fd.Null && v.Value == "" {
			// An empty value has no text of its own: point at the key.
			fd.ValueSpan = fd.KeySpan
		}
	} else {
		fd.ValueSpan = ps.lineSpan(ps.fmYAMLLine + v.Line - 1)
	}
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			fd.Children = append(fd.Children, ps.field(v.Content[i], resolveAlias(v.Content[i+1])))
		}
	}
	return fd
}

// intField decodes an integer scalar as the upstream YAML library does:
// unquoted decimal (optional +) or 0x/0o/0b; quoted, float and
// leading-zero values are type errors.
func (ps *parser) intField(fd *Field, v *yaml.Node) (int64, bool) {
	bad := func(why string) (int64, bool) {
		ps.errorf(CodeFrontmatter, fd.ValueSpan, "invalid frontmatter: `%s` must be an integer, %s", fd.Key, why)
		return 0, false
	}
	if !fd.Scalar {
		return bad("got a " + kindName(v))
	}
	if fd.Quoted {
		return bad(fmt.Sprintf("got the quoted string %q; remove the quotes: `%s: %s`", fd.Value, fd.Key, fd.Value))
	}
	u, why := yamlInt(fd.Value)
	if why != "" {
		return bad(why)
	}
	return u, true
}

// yamlInt decodes an unquoted scalar as an integer the way the upstream
// YAML library does: decimal with an optional sign, or 0x/0o/0b. Floats
// and leading-zero decimals are refused. why says what is wrong, or "".
func yamlInt(s string) (int64, string) {
	var u int64
	var err error
	switch {
	case allOf(strings.TrimPrefix(s, "+"), isDec) || strings.HasPrefix(s, "-") && allOf(s[1:], isDec):
		digits := strings.TrimLeft(s, "+-")
		if len(digits) > 1 && digits[0] == '0' {
			return 0, fmt.Sprintf("got %q (leading zeros are not allowed)", s)
		}
		u, err = strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	case strings.HasPrefix(s, "0x") && allOf(s[2:], isHex):
		u, err = strconv.ParseInt(s[2:], 16, 64)
	case strings.HasPrefix(s, "0o") && allOf(s[2:], isOct):
		u, err = strconv.ParseInt(s[2:], 8, 64)
	case strings.HasPrefix(s, "0b") && allOf(s[2:], isBin):
		u, err = strconv.ParseInt(s[2:], 2, 64)
	default:
		return 0, fmt.Sprintf("got %q", s)
	}
	if err != nil {
		return 0, fmt.Sprintf("got %q, which does not fit a 64-bit integer", s)
	}
	return u, ""
}

func (ps *parser) ioSpec(fd *Field, v *yaml.Node) *IOSpec {
	if v.Kind != yaml.MappingNode {
		ps.errorf(CodeFrontmatter, fd.ValueSpan, "invalid frontmatter: `%s` must be a mapping with `path` and `description`", fd.Key)
		return nil
	}
	io := &IOSpec{}
	got := map[string]bool{}
	for _, c := range fd.Children {
		switch c.Key {
		case "path", "description":
			if got[c.Key] {
				ps.errorf(CodeFrontmatter, c.KeySpan, "invalid frontmatter: duplicate key `%s.%s`", fd.Key, c.Key)
				continue
			}
			got[c.Key] = true
			if !c.Scalar {
				ps.errorf(CodeFrontmatter, c.ValueSpan, "invalid frontmatter: `%s.%s` must be a string", fd.Key, c.Key)
				continue
			}
			if c.Key == "path" {
				io.Path = c.Value
			} else {
				io.Description = c.Value
			}
		default:
			ps.errorf(CodeFrontmatter, c.KeySpan, "invalid frontmatter: unknown key `%s.%s`%s; `%s` takes exactly `path` and `description`", fd.Key, c.Key, didYouMean(c.Key, IOKeys), fd.Key)
		}
	}
	for _, req := range IOKeys {
		if !got[req] {
			ps.errorf(CodeFrontmatter, fd.KeySpan, "invalid frontmatter: `%s` is missing `%s`", fd.Key, req)
		}
	}
	return io
}

// Probe is the lenient version probe (docs/language.md#versions): it decodes only the
// promptforge key and never fails. ok is false when the file is not a
// PromptForge prompt (no frontmatter, unclosed, bad YAML, quoted or
// non-integer value, or an absent/null key).
func Probe(content []byte) (version uint32, ok bool) {
	var lines []string
	for line := range contentLines(content) {
		lines = append(lines, strings.TrimSuffix(line, "\r"))
		if len(lines) > 1 && strings.TrimSpace(line) == "---" {
			break
		}
		if len(lines) == 1 && strings.TrimSpace(line) != "---" {
			return 0, false
		}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != "---" {
		return 0, false
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte(strings.Join(lines[1:len(lines)-1], "\n")), &doc) != nil || len(doc.Content) == 0 {
		return 0, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return 0, false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "promptforge" {
			continue
		}
		v := resolveAlias(root.Content[i+1])
		if v.Kind != yaml.ScalarNode || v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			return 0, false
		}
		x, why := yamlInt(v.Value)
		if why != "" || x < 0 || x > math.MaxUint32 {
			return 0, false
		}
		return uint32(x), true
	}
	return 0, false
}

// DeclaresPromptforge reports whether content looks like a prompt to a
// front end that must decide whether to care about a Markdown file: its
// frontmatter opens and has a line starting with `promptforge` (so that
// broken prompts still get diagnostics).
func DeclaresPromptforge(content []byte) bool {
	first := true
	for line := range contentLines(content) {
		t := strings.TrimSpace(line)
		if first {
			if t != "---" {
				return false
			}
			first = false
			continue
		}
		if t == "---" {
			return false
		}
		if strings.HasPrefix(t, "promptforge") {
			return true
		}
	}
	return false
}

// contentLines yields the lines of a file's content without their line
// ends (a CRLF line keeps its CR), a lone CR ending a line too and a
// leading byte order mark dropped. Only the lines read are copied: the
// callers look at the first few lines of what may be a large document,
// on every keystroke.
func contentLines(content []byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		b := bytes.TrimPrefix(content, []byte(source.BOM))
		for len(b) > 0 {
			line, rest := b, b[:0]
			if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
				switch {
				case b[i] == '\n':
					line, rest = b[:i], b[i+1:]
				case i+1 < len(b) && b[i+1] == '\n': // CRLF: the CR stays
					line, rest = b[:i+1], b[i+2:]
				default: // a lone CR
					line, rest = b[:i], b[i+1:]
				}
			}
			if !yield(string(line)) {
				return
			}
			b = rest
		}
	}
}

// oldLuaPrompt is the old-forms entry of the removed ```lua prompt fence.
func oldLuaPrompt() *api.OldForm {
	o, _ := api.LookupOld("lua prompt")
	return o
}
