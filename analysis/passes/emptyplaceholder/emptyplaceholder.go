package emptyplaceholder

import (
	"fmt"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/internal/chunkmemo"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/analysis/value"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/template"
)

// Code is the diagnostic code.
const Code = "empty-placeholder"

// Analyzer reports placeholders that render empty for certain.
var Analyzer = &analysis.Analyzer{
	Name: "emptyplaceholder",
	Doc:  "report placeholders whose value is certainly the empty string when the prose is sent",
	Codes: []*analysis.Code{{Name: Code, Severity: analysis.Warning,
		Summary: "A {{ var.key }} or {{ name }} placeholder renders empty for certain: its value is the empty string when the prose is sent."}},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	ix := chunkmemo.IndexOf(prog)
	run := chunkmemo.Start[*value.Facts](ix, chunkKey)
	defer run.Done()
	for _, u := range prog.Sections {
		s := u.Section
		at := fl.At(s)
		if !at.In(fl.Known.Walked) {
			continue
		}
		// chunkAt is the section's chunk of block i (a few per section:
		// a scan, not a map per section).
		chunkAt := func(i int) *program.Chunk {
			for _, c := range u.Chunks {
				if c.Kind != program.SharedChunk && c.Block == i {
					return c
				}
			}
			return nil
		}
		for i, b := range s.Blocks {
			if b.Kind != parse.ProseBlock || i == 0 || !at.BlockRuns(i) {
				continue
			}
			prev := chunkAt(i - 1)
			if prev == nil || len(prev.AST) == 0 {
				continue
			}
			// The findings depend on the prose and the facts of the
			// chunk before it: memoised on that chunk (chunkmemo).
			part := chunkmemo.Part[*value.Facts]{Table: ix.Table(prev.Index()), File: pass.File, FP: prog.Facts(prev),
				Core: prev.Span, Chunks: ix.Chunks(prev.Index(), prev.Index()),
				Region: source.Span{Start: prev.Span.Start, End: max(prev.Span.End, b.Prose.Span.End)}}
			for _, d := range run.Findings(part, func(report func(analysis.Diagnostic)) {
				check(report, prog, prev, b.Prose)
			}) {
				pass.Report(d)
			}
		}
	}
	return nil, nil
}

// chunkKey is the memo of the findings about the prose after a chunk.
var chunkKey = chunkmemo.NewKey("emptyplaceholder")

// check reports the placeholders of pr whose value, as chunk c leaves the
// VM, is the empty string.
func check(report func(analysis.Diagnostic), prog *program.Program, c *program.Chunk, pr *parse.Prose) {
	exit := prog.Facts(c).Exit
	if exit == nil {
		return
	}
	t, err := pr.TextTemplate()
	if err != nil {
		return
	}
	for _, n := range t.Nodes {
		if n.Kind == template.Text || len(n.Segments) == 0 {
			continue
		}
		name := ""
		switch root := n.Segments[0].Name; {
		case root == "var" && len(n.Segments) == 2:
			name = "var." + n.Segments[1].Name
		case len(n.Segments) == 1 && root != "args" && root != "reply" && root != "item" && root != "sys":
			name = root
		default:
			continue
		}
		v, ok := exit.Get(name)
		if !ok {
			continue
		}
		if s, isStr := v.StrConst(); isStr && s == "" {
			report(analysis.Diagnostic{Span: source.Span{Start: pr.FileOffset(n.Span.Start), End: pr.FileOffset(n.Span.End)}, Code: Code,
				Message: fmt.Sprintf("{{ %s }} renders empty: %s is the empty string when this prose is sent, so the model gets nothing here; set it before the prose or remove the placeholder", n.Text, name)})
		}
	}
}
