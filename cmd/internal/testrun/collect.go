package testrun

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/cmd/internal/walk"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

// Found reports whether a file met in a folder walk is a prompt test:
// a regular NAME.test.yaml that belongs to a prompt (Claims).
func Found(path string, d fs.DirEntry) bool {
	if !d.Type().IsRegular() || !IsTestFile(path) {
		return false
	}
	data, err := fsread.ReadFile(path, fsread.TestFile)
	return err == nil && Claims(path, data)
}

// Collect expands paths into the test files under them, as `forge-lsp
// test` does (cmd/internal/walk): a file named must be a test file, a
// folder must hold one. Each refusal is written to stderr; ok is false
// when anything was refused.
func Collect(paths []string, stderr io.Writer) (files []string, ok bool) {
	return walk.Rule{
		Cmd: "test",
		Named: func(p string) error {
			if !IsTestFile(p) {
				return fmt.Errorf("%s is not a test file: test files are named NAME%s", p, Suffix)
			}
			return nil
		},
		Found: func(path string, d fs.DirEntry) (bool, error) { return Found(path, d), nil },
		None:  "%s holds no test file (NAME" + Suffix + " beside NAME.md)",
	}.Expand(paths, stderr)
}

// Report runs the test files under paths offline, from their cassettes,
// as `forge-lsp test --format json` does, and returns the report with the
// problems that kept files from running (refused paths, unreadable or
// invalid files). opts.Filter, when set, selects cases by name.
func Report(ctx context.Context, paths []string, opts Options) (JSONReport, []string) {
	var refusals strings.Builder
	files, _ := Collect(paths, &refusals)
	var problems []string
	for _, l := range strings.Split(strings.TrimSpace(refusals.String()), "\n") {
		if l != "" {
			problems = append(problems, l)
		}
	}
	var runnable []*File
	for _, path := range files {
		f, err := Load(path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		Validate(f, nil)
		bad := false
		for _, d := range f.Diags {
			if d.Severity == SevError {
				problems = append(problems, d.String(filepath.ToSlash(path)))
				bad = true
			}
		}
		if !bad {
			runnable = append(runnable, f)
		}
	}
	opts.Mode = Replay
	return ToJSON(Run(ctx, runnable, opts)), problems
}
