package parse

import (
	"fmt"

	"github.com/forge-lsp/forge-lsp/engine/luaast"
	lua "github.com/yuin/gopher-lua"
)

// StmtLines returns the file lines of c where a debugger can stop before a
// statement (luaast.StmtLines), nil for a chunk with a syntax error.
func (c *Chunk) StmtLines() []int {
	if c.res == nil || c.res.err != nil {
		return nil
	}
	ls := luaast.StmtLines(c.res.stmts)
	for i := range ls {
		ls[i] += c.FirstLine - 1
	}
	return ls
}

// CompileLines compiles c with a call of luaast.LineFunc(chunk line)
// before the statements on the given file lines. The result is not
// cached: a debugger compiles only the chunks it has breakpoints in.
func (c *Chunk) CompileLines(lines []int) (*lua.FunctionProto, error) {
	if c.res == nil || c.res.err != nil {
		return nil, fmt.Errorf("lua compilation error at %s (line %d): the chunk has a syntax error", c.Label, c.FirstLine)
	}
	set := make(map[int]bool, len(lines))
	for _, l := range lines {
		set[l-c.FirstLine+1] = true
	}
	return safeCompile(luaast.InstrumentLines(c.res.stmts, set), c.Name)
}
