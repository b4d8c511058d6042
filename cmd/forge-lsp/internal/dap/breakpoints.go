package dap

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	godap "github.com/google/go-dap"
)

// lineBp is one source breakpoint.
type lineBp struct {
	id int
	// kind and line are the pause point it stops at: the heading line
	// (section), or the first line of the block (prose, Lua).
	kind      run.PointKind
	line      int
	condition string
	verified  bool
}

// funcBp is a function breakpoint on a tool alias.
type funcBp struct {
	id        int
	alias     string
	condition string
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return filepath.Clean(a)
	}
	return filepath.Clean(p)
}

// setBreakpoints replaces the breakpoints of one file and says where each
// will stop.
func (s *server) setBreakpoints(a godap.SetBreakpointsArguments) []godap.Breakpoint {
	path := absPath(a.Source.Path)
	p, perr := parseFile(a.Source.Path)
	if perr != nil {
		perr = fmt.Errorf("cannot read the file: %w", perr)
	} else {
		perr = session.CheckPrompt(a.Source.Path, p.File.Content)
	}
	req := a.Breakpoints
	if len(req) == 0 {
		for _, l := range a.Lines {
			req = append(req, godap.SourceBreakpoint{Line: l})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]godap.Breakpoint, 0, len(req))
	var keep []*lineBp
	for _, r := range req {
		s.nextBpID++
		b := godap.Breakpoint{Id: s.nextBpID, Line: r.Line, Source: &godap.Source{Name: filepath.Base(path), Path: path}}
		if perr != nil {
			b.Message = perr.Error()
			out = append(out, b)
			continue
		}
		kind, line, reason := placeBreakpoint(p, r.Line)
		if reason != "" {
			b.Message = reason
			out = append(out, b)
			continue
		}
		b.Verified, b.Line = true, line
		switch {
		case line != r.Line && kind == run.PointLine:
			b.Message = "moved to the next line where a Lua statement starts"
		case line != r.Line:
			b.Message = "moved to the start of the block: the run stops before the whole block"
		}
		keep = append(keep, &lineBp{id: b.Id, kind: kind, line: line, condition: strings.TrimSpace(r.Condition), verified: true})
		out = append(out, b)
	}
	s.bps[path] = keep
	return out
}

// placeBreakpoint finds the pause point for a breakpoint on line, or says
// why nothing can stop there.
func placeBreakpoint(p *parse.Prompt, line int) (run.PointKind, int, string) {
	f := p.File
	if f == nil {
		return 0, 0, "the file is empty"
	}
	if line < 1 {
		return 0, 0, fmt.Sprintf("line %d is not a line of the file: lines are numbered from 1", line)
	}
	if last := f.Line(max(0, len(f.Content)-1)); line > last {
		return 0, 0, fmt.Sprintf("line %d is past the end of the file (%d lines)", line, last)
	}
	if p.Frontmatter != nil && line <= f.Line(p.Frontmatter.Span.End) {
		return 0, 0, "nothing runs in the frontmatter; put the breakpoint on a section heading, a prose block or a Lua block"
	}
	blocks := func(bs []*parse.Block) (run.PointKind, int, string, bool) {
		for _, b := range bs {
			sp := b.Span()
			start, end := f.Line(sp.Start), f.Line(max(sp.Start, sp.End-1))
			if line < start || line > end {
				continue
			}
			if b.Kind == parse.LuaBlock {
				if b.Chunk.Shared {
					return 0, 0, "shared Lua runs while each section's VM is set up, where the run cannot stop; put the breakpoint on the section heading instead", true
				}
				if line == start {
					return run.PointLua, start, "", true
				}
				// A statement line: the next statement starting on or after it.
				for _, l := range b.Chunk.StmtLines() {
					if l >= line {
						return run.PointLine, l, "", true
					}
				}
				return 0, 0, fmt.Sprintf("no Lua statement starts on line %d or after it in this block; put the breakpoint on a statement or on the block's opening fence", line), true
			}
			return run.PointProse, start, "", true
		}
		return 0, 0, "", false
	}
	if c := p.Shared; c != nil && line >= f.Line(c.Span.Start) && line <= f.Line(max(c.Span.Start, c.Span.End-1)) {
		return 0, 0, "shared Lua runs while each section's VM is set up, where the run cannot stop; put the breakpoint on the section heading instead"
	}
	if p.H1 != nil && f.Line(p.H1.Span.Start) == line {
		return run.PointSection, line, ""
	}
	if k, l, why, ok := blocks(p.H1Blocks); ok {
		return k, l, why
	}
	var found func(ss []*parse.Section) (run.PointKind, int, string, bool)
	found = func(ss []*parse.Section) (run.PointKind, int, string, bool) {
		for _, sec := range ss {
			if sec.Heading != nil && f.Line(sec.Heading.Span.Start) == line {
				return run.PointSection, line, "", true
			}
			if k, l, why, ok := blocks(sec.Blocks); ok {
				return k, l, why, true
			}
			if k, l, why, ok := found(sec.Children); ok {
				return k, l, why, true
			}
		}
		return 0, 0, "", false
	}
	if k, l, why, ok := found(p.Sections); ok {
		return k, l, why
	}
	return 0, 0, fmt.Sprintf("nothing runs on line %d (a blank line or a separator); put the breakpoint on a section heading, a prose block or a Lua block", line)
}

// setFunctionBreakpoints replaces the tool breakpoints.
func (s *server) setFunctionBreakpoints(req []godap.FunctionBreakpoint) []godap.Breakpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	var src string
	if s.launch != nil {
		if data, err := fsread.ReadFile(s.launch.Program, fsread.Prompt); err == nil {
			src = string(data)
		}
	}
	s.funcBps = map[string]*funcBp{}
	out := make([]godap.Breakpoint, 0, len(req))
	for _, r := range req {
		s.nextBpID++
		alias := strings.TrimSpace(r.Name)
		b := godap.Breakpoint{Id: s.nextBpID, Verified: true}
		if src != "" && !strings.Contains(src, `"`+alias+`"`) && !strings.Contains(src, `'`+alias+`'`) {
			b.Verified, b.Message = false, fmt.Sprintf("no tool alias %q appears in the prompt (function breakpoints name a tool alias, as the model calls it)", alias)
		}
		s.funcBps[alias] = &funcBp{id: b.Id, alias: alias, condition: strings.TrimSpace(r.Condition)}
		out = append(out, b)
	}
	return out
}
