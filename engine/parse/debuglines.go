package parse

import (
	"github.com/forge-lsp/forge-lsp/engine/luaast"
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
