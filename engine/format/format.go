// Package format is the formatter of `forge-lsp fmt` and of the language
// server's formatting requests (docs/formatting.md). It formats each Lua
// fence the way StyLua formats Lua and normalises the Markdown around the
// fences conservatively: prose, which the model receives, is never
// changed.
//
// The formatter reads the prompt with the project's own parser
// (engine/parse) and each chunk with its own Lua tokenizer
// (engine/luatok). Before it returns a changed file it proves the change
// safe (proof.go): the result parses to the same structure, each chunk to
// the same Lua syntax tree (positions aside) with the same comments, and
// each prose block to the same text. A file that fails the proof is
// refused with an *UnsafeError, never returned changed.
//
// The package is pure: it reads no files (options.go parses a
// stylua.toml's text; the caller finds the file), runs nothing and never
// panics on user input.
package format

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// ParseError is returned for a file that does not parse: the formatter
// leaves it as it is.
type ParseError struct {
	Name      string
	Line, Col int
	Message   string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s (fix the error, then format again)", e.Name, e.Line, e.Col, e.Message)
}

// UnsafeError is returned when the formatted text would not mean what
// the original means: an internal error of the formatter, reported so
// that the file is left unchanged.
type UnsafeError struct {
	Name   string
	Reason string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s: internal error: formatting would change the prompt (%s); the file is left unchanged, please report it with the file", e.Name, e.Reason)
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// Source formats a prompt file's content. It returns the formatted text
// (equal to src when nothing changes), a *ParseError for a file with
// parse errors, or an *UnsafeError when the safety proof fails.
func Source(name string, src []byte, opt Options) ([]byte, error) {
	orig := parse.Parse(name, src)
	if len(orig.Errors) > 0 {
		e := orig.Errors[0]
		line, col := orig.File.Position(e.Span.Start)
		return nil, &ParseError{Name: name, Line: line, Col: col, Message: e.Message}
	}
	out := format(src, opt)
	if bytes.Equal(out, src) {
		return src, nil
	}
	if err := Prove(orig, parse.Parse(name, out)); err != nil {
		return nil, &UnsafeError{Name: name, Reason: err.Error()}
	}
	return out, nil
}

// format builds the formatted text of a prompt that parses.
func format(src []byte, opt Options) []byte {
	hasBOM := bytes.HasPrefix(src, bom)
	text := src
	if hasBOM {
		text = text[len(bom):]
	}
	if bytes.Contains(text, []byte("\r\n")) {
		text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	}
	if bytes.IndexByte(text, '\r') >= 0 {
		// A carriage return that ends no line: Markdown and Lua read it
		// differently (a line break, a space); leave such a file alone.
		return src
	}
	p := parse.Parse("", text)
	var out []byte
	if hasBOM {
		out = append(out, bom...)
	}
	s := string(text)
	pos := 0
	if fm := p.Frontmatter; fm != nil && fm.Closed {
		out = append(out, formatFrontmatter(s[fm.Span.Start:lineEnd(s, fm.Span.End)])...)
		pos = lineEnd(s, fm.Span.End)
	}
	started := len(out) > 0 && !(hasBOM && len(out) == len(bom))
	for _, a := range anchors(p) {
		if a.span.Start < pos {
			continue
		}
		out = appendGap(out, s[pos:a.span.Start], started)
		end := lineEnd(s, a.span.End)
		if a.chunk != nil {
			out = appendChunk(out, s[a.span.Start:end], a.chunk, &opt.Lua)
		} else {
			out = appendTrimmedLines(out, s[a.span.Start:end])
		}
		started = true
		pos = end
	}
	core := gapCore(s[pos:])
	if core != "" {
		if started {
			out = append(out, '\n')
		}
		out = append(out, core...)
		out = append(out, '\n')
	}
	return out
}

// anchor is a heading or a Lua fence: what the formatter rewrites.
type anchor struct {
	span  source.Span
	chunk *parse.Chunk
}

func anchors(p *parse.Prompt) []anchor {
	var as []anchor
	if p.H1 != nil {
		as = append(as, anchor{span: p.H1.Span})
	}
	if p.Shared != nil {
		as = append(as, anchor{span: p.Shared.Span, chunk: p.Shared})
	}
	addBlocks := func(bs []*parse.Block) {
		for _, b := range bs {
			if b.Kind == parse.LuaBlock {
				as = append(as, anchor{span: b.Chunk.Span, chunk: b.Chunk})
			}
		}
	}
	addBlocks(p.H1Blocks)
	var walk func([]*parse.Section)
	walk = func(ss []*parse.Section) {
		for _, s := range ss {
			as = append(as, anchor{span: s.Heading.Span})
			addBlocks(s.Blocks)
			walk(s.Children)
		}
	}
	walk(p.Sections)
	sort.SliceStable(as, func(i, j int) bool { return as[i].span.Start < as[j].span.Start })
	return as
}

// lineEnd extends offset e to the end of its line, after the line break
// (e itself when it follows a line break or is the end of s).
func lineEnd(s string, e int) int {
	if e > len(s) {
		e = len(s)
	}
	if e == 0 || s[e-1] == '\n' {
		return e
	}
	if k := strings.IndexByte(s[e:], '\n'); k >= 0 {
		return e + k + 1
	}
	return len(s)
}

// gapCore is the text between two anchors without its leading and
// trailing blank lines and without a final line break; the lines in
// between are kept byte for byte (they hold prose).
func gapCore(g string) string {
	// Leading blank lines: whole lines of white space.
	for {
		k := strings.IndexByte(g, '\n')
		if k < 0 || strings.TrimSpace(g[:k]) != "" {
			break
		}
		g = g[k+1:]
	}
	if strings.TrimSpace(g) == "" {
		return ""
	}
	// Trailing blank lines.
	g = strings.TrimRight(g, "\n")
	for {
		k := strings.LastIndexByte(g, '\n')
		if k < 0 || strings.TrimSpace(g[k+1:]) != "" {
			break
		}
		g = strings.TrimRight(g[:k], "\n")
	}
	return g
}

// appendGap writes the text before an anchor: one blank line, the gap's
// content if any and one more blank line, or nothing at the top of the
// file.
func appendGap(out []byte, g string, started bool) []byte {
	core := gapCore(g)
	if core == "" {
		if started {
			out = append(out, '\n')
		}
		return out
	}
	if started {
		out = append(out, '\n')
	}
	out = append(out, core...)
	return append(out, '\n', '\n')
}

// appendTrimmedLines writes heading lines without trailing white space.
func appendTrimmedLines(out []byte, s string) []byte {
	for _, line := range strings.SplitAfter(s, "\n") {
		if line == "" {
			continue
		}
		out = append(out, strings.TrimRight(line, " \t\n")...)
		out = append(out, '\n')
	}
	return out
}

// appendChunk writes a Lua fence with its formatted source; a chunk the
// formatter's parser does not accept is kept as written.
func appendChunk(out []byte, fence string, c *parse.Chunk, opt *LuaOptions) []byte {
	opener := fence[:strings.IndexByte(fence, '\n')+1]
	out = append(out, opener...)
	lua, err := formatLua(c.Source, opt)
	if err != nil {
		return append(out, fence[len(opener):]...)
	}
	if lua != "" {
		out = append(out, lua...)
		out = append(out, '\n')
	}
	return append(out, "```\n"...)
}

// Lua formats one Lua chunk's source, as the formatter formats a fence.
func Lua(src string, opt LuaOptions) (string, error) {
	return formatLua(src, &opt)
}
