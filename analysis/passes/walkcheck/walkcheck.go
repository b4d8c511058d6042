// Package walkcheck reports what the abstract walk (analysis/flow) finds
// about the section graph itself: jump cycles every run enters and can
// leave only through the section-entry cap, and sections no run can ever
// enter.
package walkcheck

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/rules"
)

// Codes.
const (
	CodeCycle     = "jump-cycle"
	CodeUnreached = "unreached-section"
	CodeRecursion = "nested-recursion"
)

// Analyzer reports jump cycles and never-entered sections.
var Analyzer = &analysis.Analyzer{
	Name: "walkcheck",
	Doc:  "report jump cycles whose only exit is the section-entry cap, execute/fanout recursion that only the nesting cap ends, and sections no run can enter",
	Codes: []*analysis.Code{
		{Name: CodeCycle, Severity: analysis.Error, Summary: "Every run enters a jump cycle that only the 1,000 section-entry cap ends, so the run fails (Quota)."},
		{Name: CodeRecursion, Severity: analysis.Error, Summary: "Sections execute (or fan out to) each other before anything could stop them, so the run fails at the nesting cap of 8."},
		{Name: CodeUnreached, Severity: analysis.Hint, Summary: "No walk, jump, execute or fanout can enter this section, so its content never runs."},
	},
	Requires: []*analysis.Analyzer{program.Analyzer, flow.Analyzer},
	Run:      runPass,
}

func runPass(pass *analysis.Pass) (any, error) {
	prog := pass.ResultOf[program.Analyzer].(*program.Program)
	fl := pass.ResultOf[flow.Analyzer].(*flow.Result)
	for _, c := range fl.Cycles {
		if c.Via != nil {
			pass.Report(analysis.Diagnostic{Span: prog.CallSpan(c.Via), Code: CodeCycle,
				Message: fmt.Sprintf("jump cycle %s in the chain this execute runs (a jump in a chain stays in it): nothing leaves it, so the run fails when it exceeds %d section entries (Quota); make a jump conditional (on var state), or return a result",
					cyclePath(c.Sections), rules.MaxSectionEntries),
				Related: []analysis.RelatedInformation{{Span: prog.CallSpan(c.Close), Message: "the jump that closes the cycle"}}})
			continue
		}
		pass.Reportf(prog.CallSpan(c.Close), CodeCycle,
			"jump cycle %s: every run enters it and nothing leaves it, so the run fails when it exceeds %d section entries (Quota); make a jump conditional (on var state), or return a result",
			cyclePath(c.Sections), rules.MaxSectionEntries)
	}
	for _, rc := range fl.Recursions {
		if rc.Jumps {
			pass.Reportf(prog.CallSpan(rc.Call), CodeRecursion,
				"%s recursion %s: the nested run of its target jumps (a jump stays in the chain or arm) back to the section that makes this call, so the run fails at the nesting cap of %d; put the call or the jump under a condition (on var state)",
				rc.Call.Path, cyclePath(rc.Sections), rules.MaxDepth)
			continue
		}
		if rc.FallsThrough {
			pass.Reportf(prog.CallSpan(rc.Call), CodeRecursion,
				"%s recursion %s: the execute chain runs its target and falls through the sections after it back to this call, so the run fails at the nesting cap of %d; end the chain with a return in its target, or put the call under a condition (on var state)",
				rc.Call.Path, cyclePath(rc.Sections), rules.MaxDepth)
			continue
		}
		pass.Reportf(prog.CallSpan(rc.Call), CodeRecursion,
			"%s recursion %s: every entry makes this call before anything could stop it, so the run fails at the nesting cap of %d; put the call under a condition (on var state)",
			rc.Call.Path, cyclePath(rc.Sections), rules.MaxDepth)
	}
	if fl.May.Any || fl.H1Ends {
		return nil, nil
	}
	// Sections read as data are not meant to run.
	data := map[*parse.Section]bool{}
	for _, c := range prog.Calls {
		if c.Canonical() != "list_from_section" || prog.ChunkOf(c).Kind != program.SectionChunk {
			continue
		}
		if t, _, ok := prog.StringArg(c, 0); ok {
			if s, err := parse.Resolve(pass.Prompt, prog.ChunkOf(c).Section, t); err == nil {
				data[s] = true
			}
		}
	}
	var visit func([]*parse.Section)
	visit = func(ss []*parse.Section) {
		for _, s := range ss {
			// Prose-only off-walk sections and child sections are where
			// authors keep notes; code that can never run is reported
			// anywhere.
			meant := hasLua(s) || (!s.OffWalk && s.Parent == nil && hasContent(s))
			if !fl.May.Entered.Has(s) && !data[s] && !s.IsList && s.Heading != nil && meant {
				why := "it is not on the walk"
				switch {
				case s.OffWalk:
					why = "it is off-walk (--- first)"
				case s.Parent != nil:
					why = "the walk never descends into child sections"
				}
				pass.Reportf(s.Heading.NameSpan, CodeUnreached,
					"section `%s` never runs: %s and no jump, execute or fanout that can run names it", s.Name, why)
			}
			visit(s.Children)
		}
	}
	visit(pass.Prompt.Sections)
	return nil, nil
}

func hasContent(s *parse.Section) bool {
	for _, b := range s.Blocks {
		if b.Kind == parse.LuaBlock || strings.TrimSpace(b.Prose.Text) != "" {
			return true
		}
	}
	return false
}

func hasLua(s *parse.Section) bool {
	for _, b := range s.Blocks {
		if b.Kind == parse.LuaBlock {
			return true
		}
	}
	return false
}

// cyclePath names a cycle's sections in order and back to the first:
// "## A -> ## B -> ## A".
func cyclePath(secs []*parse.Section) string {
	names := make([]string, 0, len(secs)+1)
	for _, s := range secs {
		names = append(names, s.Address())
	}
	return strings.Join(append(names, secs[0].Address()), " -> ")
}
