package placement

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// Codes.
const (
	CodeMisplaced = "misplaced-call"
	CodeLateUse   = "late-model-use"
)

// Analyzer checks call placement.
var Analyzer = &analysis.Analyzer{
	Name: "placement",
	Doc:  "check that H1-only and section-only API calls run where the runtime allows them",
	Codes: []*analysis.Code{
		{Name: CodeMisplaced, Severity: analysis.Error, Summary: "An API call runs where the runtime refuses it (H1-only call in a section, section-only call in H1, jump during the shared-library load)."},
		{Name: CodeLateUse, Severity: analysis.Warning, Summary: "models.use runs after the section's first prose block, so it does not change the prose model."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	// Each chunk's findings depend on its text, its kind and where it
	// stands among its section's blocks (before or after the first
	// prose): memoised on the chunk (chunkmemo).
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[chunkFP](ix, chunkKey)
	defer run.Done()
	for i, ch := range prog.Chunks {
		calls := prog.CallsIn(ch)
		if len(calls) == 0 && len(ch.AST) == 0 {
			continue
		}
		fp := chunkFP{kind: ch.Kind, block: ch.Block, prose: -1}
		if ch.Section != nil {
			fp.prose = firstProse(ch.Section)
		}
		part := chunkmemo.Part[chunkFP]{Table: ix.Table(i), Chunks: ix.Chunks(i, i), File: pass.File, Region: ch.Span, FP: fp}
		run.Report(pass, part, func() {
			judgeChunk(pass, prog, calls, ix.Globals(i))
		})
	}
	return nil, nil
}

// chunkKey is the memo of a chunk's findings.
var chunkKey = chunkmemo.NewKey("placement")

// chunkFP is what they depend on besides the chunk's text: its kind,
// its block index and that of its section's first prose block (-1: none).
type chunkFP struct {
	kind         program.ChunkKind
	block, prose int
}

// firstProse returns the index of the first prose block of s, or -1.
func firstProse(s *parse.Section) int {
	for i, b := range s.Blocks {
		if b.Kind == parse.ProseBlock {
			return i
		}
	}
	return -1
}

// judgeChunk checks the calls cs and globals gs of one chunk.
func judgeChunk(pass *analysis.Pass, prog *program.Program, cs []*program.Call, gs []*program.Global) {
	for _, c := range cs {
		e := c.Entry
		if e == nil || !e.Host {
			continue
		}
		name := c.Path
		switch {
		case e.Name == "tools.add_local" && c.Where == api.H1:
			// add-local-in-h1
		case e.Name == "jump" && c.Where == api.Handler:
			// jump-in-handler
		case c.Where&e.Allowed != 0:
			if e.Name == "models.use" && late(prog, c) {
				pass.Reportf(prog.NameSpan(c), CodeLateUse, "models.use runs after this section's first prose block; the prose model was already chosen there, so this only changes models.infer; move it into a Lua block before the first prose")
			}
		case c.Where == api.H1 && e.Defined&api.H1 == 0:
			pass.Reportf(prog.NameSpan(c), CodeMisplaced, "%s does not exist in H1 (the call fails as a nil call); it is only available in sections (## headings)", name)
		case c.Where == api.H1:
			pass.Reportf(prog.NameSpan(c), CodeMisplaced, "%s is only available in sections (## headings); H1 runs once before sections exist", name)
		case e.Name == "jump" && c.Where == api.SharedLoad:
			pass.Reportf(prog.NameSpan(c), CodeMisplaced, "jump is not available during the shared library load; call it from a section's own Lua, or from a shared function that sections call")
		case e.Allowed == api.H1:
			where := "section code"
			if prog.ChunkOf(c).Kind == program.SharedChunk {
				where = "the shared library, which runs in every section"
			}
			pass.Reportf(prog.NameSpan(c), CodeMisplaced, "%s is only available in the H1 preamble, not in %s; declare bindings in an H1 ```lua block", name, where)
		default:
			pass.Reportf(prog.NameSpan(c), CodeMisplaced, "%s is only available in %s", name, e.Allowed)
		}
	}
	// tools.calls is installed at the section's first prose block; top-level
	// code before it reads a nil table.
	for _, g := range gs {
		if g.Write || g.InFunc || g.Where != api.Section || prog.ChunkOf(g).Kind != program.SectionChunk ||
			(g.Path != "tools.calls" && !strings.HasPrefix(g.Path, "tools.calls.")) {
			continue
		}
		if beforeFirstProse(prog.ChunkOf(g)) {
			pass.Reportf(prog.PathSpan(g), CodeMisplaced, "tools.calls is nil until the section's first prose block (the engine installs it there); read it in a Lua block after the prose")
		}
	}
}

// beforeFirstProse reports whether a section chunk runs before the
// section's first prose block.
func beforeFirstProse(c *program.Chunk) bool {
	for i, b := range c.Section.Blocks {
		if b.Kind == parse.ProseBlock {
			return c.Block < i
		}
	}
	return true // no prose at all: tools.calls is never installed
}

// late reports whether a models.use call runs after the first prose block
// of its section.
func late(prog *program.Program, c *program.Call) bool {
	if c.Where == api.Handler {
		return true // handlers run inside prose blocks
	}
	ch := prog.ChunkOf(c)
	if ch.Kind != program.SectionChunk {
		return false
	}
	for i, b := range ch.Section.Blocks {
		if b.Kind == parse.ProseBlock {
			return ch.Block > i
		}
	}
	return false
}
