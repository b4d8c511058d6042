package cli

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
)

// Findings checks one prompt or test file exactly as `forge-lsp check
// --format json` does (the workspace configuration found above path
// applies) and returns its findings. content is the file's text, which
// need not be saved.
func Findings(path string, content []byte) ([]Diagnostic, error) {
	if testrun.IsTestFile(path) {
		return checkTestFile(path, content), nil
	}
	cfg, err := analysis.FindConfig(path)
	if err != nil {
		return nil, err
	}
	return checkFile(path, content, cfg), nil
}

// TestReport runs the test files under paths offline, from their
// cassettes, as `forge-lsp test --format json` does, and returns the
// report with the problems that kept files from running (unreadable,
// invalid). filter, when set, selects cases by name.
func TestReport(ctx context.Context, paths []string, opts testrun.Options) (testrun.JSONReport, []string) {
	var refusals strings.Builder
	files, _ := collectTests(paths, &refusals)
	var problems []string
	for _, l := range strings.Split(strings.TrimSpace(refusals.String()), "\n") {
		if l != "" {
			problems = append(problems, l)
		}
	}
	var runnable []*testrun.File
	for _, path := range files {
		f, err := testrun.Load(path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		testrun.Validate(f, nil)
		bad := false
		for _, d := range f.Diags {
			if d.Severity == testrun.SevError {
				problems = append(problems, d.String(filepath.ToSlash(path)))
				bad = true
			}
		}
		if !bad {
			runnable = append(runnable, f)
		}
	}
	opts.Mode = testrun.Replay
	return testrun.ToJSON(testrun.Run(ctx, runnable, opts)), problems
}
