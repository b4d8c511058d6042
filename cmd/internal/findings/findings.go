// Package findings is a prompt's or a test file's findings in the shape
// `forge-lsp check --format json` prints them (1-based lines, 1-based
// byte columns), shared by the command line and the MCP server's
// check_prompt so that both report the same findings the same way.
package findings

import (
	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Diagnostic is one finding in the output coordinates of `check --format json` and the MCP server's check_prompt: 1-based lines,
// 1-based byte columns.
type Diagnostic struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	Severity  string `json:"severity"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Analyzer  string `json:"analyzer,omitempty"`
	Fixes     []Fix  `json:"fixes,omitempty"`
	Related   []Rel  `json:"related,omitempty"`

	// Span and File keep the byte coordinates (for SARIF's UTF-16
	// columns); FixSpans are the fixes' edits in bytes. None is printed.
	Span     source.Span           `json:"-"`
	File     *source.File          `json:"-"`
	FixSpans [][]analysis.TextEdit `json:"-"`
}

// Fix is a suggested fix in CLI coordinates.
type Fix struct {
	Message string `json:"message"`
	Edits   []Edit `json:"edits"`
	// Safe fixes are the ones `check --fix` applies.
	Safe bool `json:"safe,omitempty"`
}

// Edit replaces a range with new text.
type Edit struct {
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	NewText   string `json:"new_text"`
}

// Rel is a related location.
type Rel struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// Of checks one prompt or test file exactly as `forge-lsp check --format
// json` does (the workspace configuration found above path applies) and
// returns its findings. content is the file's text, which need not be
// saved.
func Of(path string, content []byte) ([]Diagnostic, error) {
	if testrun.IsTestFile(path) {
		return CheckTestFile(path, content), nil
	}
	cfg, err := analysis.FindConfig(path)
	if err != nil {
		return nil, err
	}
	return Check(path, content, cfg), nil
}

// CheckTestFile validates a test file against its prompt.
func CheckTestFile(path string, content []byte) []Diagnostic {
	tf := testrun.Parse(path, content)
	testrun.Validate(tf, nil)
	src := source.NewFile(path, content)
	out := make([]Diagnostic, 0, len(tf.Diags))
	for _, d := range tf.Diags {
		start := src.Offset(d.Line, d.Col)
		end := src.Offset(d.Line, max(d.EndCol, d.Col))
		_, ec := src.Position(end)
		out = append(out, Diagnostic{Path: path, Line: d.Line, Column: d.Col, EndLine: d.Line, EndColumn: ec,
			Severity: d.Severity, Code: d.Code, Message: d.Message, Analyzer: "testfile",
			Span: source.Span{Start: start, End: end}, File: src})
	}
	return out
}

// Check analyses one prompt with cfg and returns its findings in file
// order.
func Check(path string, content []byte, cfg *analysis.Config) []Diagnostic {
	p := parse.Parse(path, content)
	f := p.File
	found := checker.Check(p, cfg)
	out := make([]Diagnostic, 0, len(found))
	for _, d := range found {
		l, c := f.Position(d.Span.Start)
		el, ec := f.Position(d.Span.End)
		cd := Diagnostic{Path: path, Line: l, Column: c, EndLine: el, EndColumn: ec,
			Severity: d.Severity.String(), Code: d.Code, Message: d.Message, Analyzer: d.Analyzer,
			Span: d.Span, File: f}
		for _, fx := range d.SuggestedFixes {
			cf := Fix{Message: fx.Message, Safe: fx.Safe}
			for _, e := range fx.Edits {
				l, c := f.Position(e.Span.Start)
				el, ec := f.Position(e.Span.End)
				cf.Edits = append(cf.Edits, Edit{Line: l, Column: c, EndLine: el, EndColumn: ec, NewText: e.NewText})
			}
			cd.Fixes = append(cd.Fixes, cf)
			cd.FixSpans = append(cd.FixSpans, fx.Edits)
		}
		for _, r := range d.Related {
			l, c := f.Position(r.Span.Start)
			cd.Related = append(cd.Related, Rel{Line: l, Column: c, Message: r.Message})
		}
		out = append(out, cd)
	}
	return out
}
