package format

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	luaparse "github.com/yuin/gopher-lua/parse"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// Range formats the top-level statements of one Lua fence that the byte
// range [start, end) of src covers (an empty range: the statement at
// start), whole lines at a time, and returns the new text of the whole
// file. A range outside every fence, or covering none of a fence's
// statements, changes nothing. The result passes the same proof as
// Source's.
func Range(name string, src []byte, start, end int, opt Options) ([]byte, error) {
	return RangeOf(parse.Parse(name, src), start, end, opt)
}

// RangeOf is Range over a parse the caller holds (the language server's
// snapshot): p.File.Content is the text. See RangeEdit.
func RangeOf(orig *parse.Prompt, start, end int, opt Options) ([]byte, error) {
	e, err := RangeEdit(orig, start, end, opt)
	if err != nil || e == nil {
		return orig.File.Content, err
	}
	src := orig.File.Content
	out := make([]byte, 0, len(src)+len(e.New)-(e.End-e.Start))
	out = append(out, src[:e.Start]...)
	out = append(out, e.New...)
	return append(out, src[e.End:]...), nil
}

// RangeEdit is the edit of whole lines that RangeOf makes (nil when it
// changes nothing); its cost is the fence's, not the file's. The proof is
// local to the fence: the text outside the replaced lines is unchanged,
// no new line of the fence starts with ``` (so it closes where it
// closed), and its Lua parses to the same syntax tree with the same
// comments. Line breaks are kept: in a file with CRLF line breaks the
// new lines end with CRLF (the Lua is formatted and proved as the parser
// reads it, with LF), and no other line is touched.
func RangeEdit(orig *parse.Prompt, start, end int, opt Options) (*Edit, error) {
	name, src := orig.File.Name, orig.File.Content
	if len(orig.Errors) > 0 {
		e := orig.Errors[0]
		line, col := orig.File.Position(e.Span.Start)
		return nil, &ParseError{Name: name, Line: line, Col: col, Message: e.Message}
	}
	start, end = clamp(start, len(src)), clamp(end, len(src))
	if end < start {
		return nil, nil
	}
	c := chunkAt(orig, start, end)
	if c == nil || !c.OK() {
		return nil, nil
	}
	lua := c.Source
	seg := src[c.SourceSpan.Start:c.SourceSpan.End]
	// The parser reads each CRLF of the fence as LF and nothing else: a
	// carriage return anywhere else leaves the fence as it is.
	if strings.IndexByte(lua, '\r') >= 0 || len(seg)-bytes.Count(seg, []byte("\r\n")) != len(lua) {
		return nil, nil
	}
	toks := lexChunk(lua)
	b, err := parseChunk(toks)
	if err != nil {
		return nil, nil
	}
	rs := luaOffset(seg, start-c.SourceSpan.Start)
	re := luaOffset(seg, end-c.SourceSpan.Start)
	a, z := -1, -1
	for {
		changed := false
		for _, s := range b.stmts {
			last := s.last
			if s.semi >= 0 {
				last = s.semi
			}
			ss, se := toks[s.first].start, toks[last].end
			hit := ss < re && se > rs || (rs == re && ss <= rs && rs <= se) || (a >= 0 && ss < z && se > a)
			if !hit {
				continue
			}
			ls := strings.LastIndexByte(lua[:ss], '\n') + 1
			le := se
			// Comments that begin on the statement's last line belong to it.
			for _, cm := range toks[last+1].pre {
				if cm.nl > 0 {
					break
				}
				le = cm.end
			}
			if k := strings.IndexByte(lua[le:], '\n'); k >= 0 {
				le += k
			} else {
				le = len(lua)
			}
			if a < 0 || ls < a {
				a, changed = ls, true
			}
			if le > z {
				z, changed = le, true
			}
		}
		if !changed {
			break
		}
	}
	if a < 0 {
		return nil, nil
	}
	got, err := formatLua(lua[a:z], &opt.Lua)
	if err != nil {
		return nil, nil
	}
	newLua := lua[:a] + got + lua[z:]
	if newLua == lua {
		return nil, nil
	}
	if err := sameLua(c, newLua); err != nil {
		return nil, &UnsafeError{Name: name, Reason: err.Error()}
	}
	fa := c.SourceSpan.Start + fileOffset(seg, a)
	fz := c.SourceSpan.Start + fileOffset(seg, z)
	// The new lines end as the replaced ones did: with CRLF when the first
	// line break in or right after them is CRLF.
	if i := bytes.IndexByte(src[fa:], '\n'); i > 0 && src[fa+i-1] == '\r' {
		got = strings.ReplaceAll(got, "\n", "\r\n")
	}
	return trimEdit(src, &Edit{Start: fa, End: fz, New: got}), nil
}

// luaOffset maps offset k of a fence's text in the file (seg, where a
// line may end with CRLF) to the offset in the Lua the parser reads (each
// CRLF read as LF).
func luaOffset(seg []byte, k int) int {
	k = clamp(k, len(seg))
	n := bytes.Count(seg[:k], []byte("\r\n"))
	if k > 0 && k < len(seg) && seg[k-1] == '\r' && seg[k] == '\n' {
		// Between CR and LF: the Lua's line break.
		return k - n - 1
	}
	return k - n
}

// fileOffset maps offset k of the Lua the parser reads back to the
// fence's text in the file (seg): the inverse of luaOffset. An offset at a
// line break maps to the break's first byte (the CR of a CRLF).
func fileOffset(seg []byte, k int) int {
	i := 0
	for j := 0; j < k && i < len(seg); i++ {
		if seg[i] == '\r' && i+1 < len(seg) && seg[i+1] == '\n' {
			continue
		}
		j++
	}
	return i
}

func clamp(n, max int) int {
	if n < 0 {
		return 0
	}
	if n > max {
		return max
	}
	return n
}

// chunkAt returns the Lua chunk whose source holds [start, end), or nil.
func chunkAt(p *parse.Prompt, start, end int) *parse.Chunk {
	in := func(c *parse.Chunk) bool {
		return c != nil && c.SourceSpan.Start <= start && end <= c.SourceSpan.End
	}
	if in(p.Shared) {
		return p.Shared
	}
	inBlocks := func(bs []*parse.Block) *parse.Chunk {
		for _, b := range bs {
			if b.Kind == parse.LuaBlock && in(b.Chunk) {
				return b.Chunk
			}
		}
		return nil
	}
	if c := inBlocks(p.H1Blocks); c != nil {
		return c
	}
	var walk func([]*parse.Section) *parse.Chunk
	walk = func(ss []*parse.Section) *parse.Chunk {
		for _, s := range ss {
			if c := inBlocks(s.Blocks); c != nil {
				return c
			}
			if c := walk(s.Children); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(p.Sections)
}

// trimEdit drops the whole lines e leaves as they are at its start and
// end (nil when it changes nothing).
func trimEdit(src []byte, e *Edit) *Edit {
	old := string(src[e.Start:e.End])
	if old == e.New {
		return nil
	}
	for {
		i, j := strings.IndexByte(old, '\n'), strings.IndexByte(e.New, '\n')
		if i < 0 || j < 0 || old[:i+1] != e.New[:j+1] {
			break
		}
		old, e.New, e.Start = old[i+1:], e.New[j+1:], e.Start+i+1
	}
	for {
		i, j := strings.LastIndexByte(old, '\n'), strings.LastIndexByte(e.New, '\n')
		if i < 0 || j < 0 {
			break
		}
		// Cut before a CRLF, not inside it.
		if i > 0 && old[i-1] == '\r' {
			i--
		}
		if j > 0 && e.New[j-1] == '\r' {
			j--
		}
		if old[i:] != e.New[j:] {
			break
		}
		old, e.New, e.End = old[:i], e.New[:j], e.End-(len(old)-i)
	}
	return e
}

// chunks lists a prompt's Lua chunks in file order.
func chunks(p *parse.Prompt) []*parse.Chunk {
	var cs []*parse.Chunk
	for _, a := range anchors(p) {
		if a.chunk != nil {
			cs = append(cs, a.chunk)
		}
	}
	return cs
}

// Edit is one replacement of src[Start:End] by New.
type Edit struct {
	Start, End int
	New        string
}

// Diff returns the one edit, of whole lines, that turns a into b (none
// when they are equal): editors apply it without moving the cursor
// outside the changed lines.
func Diff(a, b []byte) []Edit {
	if bytes.Equal(a, b) {
		return nil
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	p = bytes.LastIndexByte(a[:p], '\n') + 1
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	// Keep the common suffix to whole lines.
	for s > 0 && a[len(a)-s-1] != '\n' {
		s--
	}
	return []Edit{{Start: p, End: len(a) - s, New: string(b[p : len(b)-s])}}
}

// sameLua proves that newLua may replace chunk c's source in its fence:
// no line of it starts with ``` (the fence ends where it ended), and it
// parses to c's syntax tree, positions aside, with c's comments.
func sameLua(c *parse.Chunk, newLua string) error {
	for _, line := range strings.Split(newLua, "\n") {
		if strings.HasPrefix(line, "```") {
			return fmt.Errorf("a line of %s would start with ```", c.Label)
		}
	}
	stmts, err := luaparse.Parse(strings.NewReader(newLua), c.Name)
	if err != nil {
		return fmt.Errorf("%s would not parse: %v", c.Label, err)
	}
	if !sameAST(reflect.ValueOf(c.AST), reflect.ValueOf(stmts)) {
		return fmt.Errorf("the Lua syntax tree of %s would change", c.Label)
	}
	ca, cb := commentsOf(c.Source), commentsOf(newLua)
	if strings.Join(ca, "\x00") != strings.Join(cb, "\x00") || len(ca) != len(cb) {
		return fmt.Errorf("the comments of %s would change", c.Label)
	}
	return nil
}
