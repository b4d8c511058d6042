package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

// pathRule is how a command (check, test) expands its command-line
// paths into the files it works on.
type pathRule struct {
	cmd string // the command's name in messages
	// named takes a path given on the command line that is not a folder:
	// nil, or why the command refuses it.
	named func(p string) error
	// found reports whether a file met in a folder walk is taken; an
	// error reports it as skipped.
	found func(path string, d fs.DirEntry) (bool, error)
	// none says why a folder holding no taken file is refused (%s is the
	// folder).
	none string
}

// expand expands paths: a file is taken when named accepts it, a folder
// is walked (hidden folders and node_modules skipped) for the files found
// accepts. What cannot be read is reported and skipped and the walk goes
// on; each refusal is written to stderr and makes the exit code
// exitUsage.
func (r pathRule) expand(paths []string, stderr io.Writer) ([]string, int) {
	var files []string
	code := exitOK
	fail := func(format string, a ...any) {
		fmt.Fprintf(stderr, "forge-lsp "+r.cmd+": "+format+"\n", a...)
		code = exitUsage
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			fail("%v", err)
			continue
		}
		if !fi.IsDir() {
			if err := r.named(p); err != nil {
				fail("%v", err)
				continue
			}
			files = append(files, p)
			continue
		}
		n := len(files)
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == p {
					return err
				}
				fail("skipped: %v", err)
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			ok, err := r.found(path, d)
			if err != nil {
				fail("skipped: %v", err)
			} else if ok {
				files = append(files, path)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipDir) {
			fail("%v", err)
			continue
		}
		if len(files) == n {
			fail(r.none, p)
		}
	}
	return files, code
}

// foundTest reports whether a file met in a folder walk is a prompt test:
// a regular NAME.test.yaml that belongs to a prompt (testrun.Claims).
func foundTest(path string, d fs.DirEntry) bool {
	if !d.Type().IsRegular() || !testrun.IsTestFile(path) {
		return false
	}
	data, err := fsread.ReadFile(path, fsread.TestFile)
	return err == nil && testrun.Claims(path, data)
}
