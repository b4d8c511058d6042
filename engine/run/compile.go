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
// before the statements on the given file lines. The proto is memoised
// with the uninstrumented ones, under the chunk's Key and the lines: a
// debugger re-running a prompt (stepping back, re-running a frame)
// compiles each instrumented chunk once.
func compileLines(c *parse.Chunk, lines []int) (*lua.FunctionProto, error) {
	if !c.OK() {
		return nil, fmt.Errorf("lua compilation error at %s (line %d): the chunk has a syntax error", c.Label, c.FirstLine)
	}
	// Chunk lines, not file lines: the same chunk text may stand at
	// another place in another file (or a later version of this one).
	rel := make([]int, len(lines))
	for i, l := range lines {
		rel[i] = l - c.FirstLine + 1
	}
	key := linesKey{chunk: c.Key(), lines: fmt.Sprint(rel)}
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
	e.once.Do(func() {
		set := make(map[int]bool, len(rel))
		for _, l := range rel {
			set[l] = true
		}
		e.proto, e.err = safeCompile(luaast.InstrumentLines(c.AST, set), c.Name)
	})
	return e.proto, e.err
}

// linesKey is the cache key of a chunk compiled with line calls.
type linesKey struct {
	chunk any
	lines string
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
