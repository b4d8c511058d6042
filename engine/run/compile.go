package run

import (
	"fmt"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/luaast"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Bytecode belongs to the runtime: the parser keeps the syntax tree, and
// the checker and the editor, which never run a chunk, link no compiler
// (analysis/layers_test.go). A chunk is compiled on first use and the
// proto memoised under its parse.Chunk.Key, so the VMs of every run share
// one proto per chunk text.

// maxProtos bounds the bytecode cache; when full it starts again (the
// chunks in use are compiled anew on their next run).
const maxProtos = 4096

var protos = struct {
	sync.Mutex
	m map[any]*protoEntry
}{m: map[any]*protoEntry{}}

type protoEntry struct {
	once  sync.Once
	proto *lua.FunctionProto
	err   error
}

// compileChunk returns c's bytecode. It fails for a chunk that did not
// parse, and for the rare limits only the compiler checks (too many
// locals, constants or registers).
func compileChunk(c *parse.Chunk) (*lua.FunctionProto, error) {
	key := c.Key()
	if key == nil {
		return nil, fmt.Errorf("lua compilation error at %s (line %d): the chunk has a syntax error", c.Label, c.FirstLine)
	}
	protos.Lock()
	e := protos.m[key]
	if e == nil {
		if len(protos.m) >= maxProtos {
			clear(protos.m)
		}
		e = &protoEntry{}
		protos.m[key] = e
	}
	protos.Unlock()
	e.once.Do(func() { e.proto, e.err = safeCompile(c.AST, c.Name) })
	if e.err != nil {
		line := 1
		if ce, ok := e.err.(*lua.CompileError); ok {
			line = ce.Line
		}
		return nil, fmt.Errorf("lua compilation error at %s (line %d): %s", c.Label, c.FirstLine+line-1, compileMsg(e.err))
	}
	return e.proto, nil
}

// compileLines compiles c with a call of luaast.LineFunc(chunk line)
// before the statements on the given file lines. The result is not
// cached: a debugger compiles only the chunks it has breakpoints in.
func compileLines(c *parse.Chunk, lines []int) (*lua.FunctionProto, error) {
	if !c.OK() {
		return nil, fmt.Errorf("lua compilation error at %s (line %d): the chunk has a syntax error", c.Label, c.FirstLine)
	}
	set := make(map[int]bool, len(lines))
	for _, l := range lines {
		set[l-c.FirstLine+1] = true
	}
	return safeCompile(luaast.InstrumentLines(c.AST, set), c.Name)
}

func compileMsg(err error) string {
	if ce, ok := err.(*lua.CompileError); ok {
		return ce.Message
	}
	return err.Error()
}

func safeCompile(stmts []ast.Stmt, name string) (p *lua.FunctionProto, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	// `..` becomes a call of the sandbox's budgeted concatenation.
	return lua.Compile(luaast.GuardConcat(stmts), name)
}
