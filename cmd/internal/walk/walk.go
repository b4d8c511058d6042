// Package walk expands the paths a command is given (check, test, and
// the MCP server's run_tests) into the files it works on, with the same
// rules everywhere: folders walked with hidden folders and node_modules
// skipped, each refusal reported.
package walk

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Rule is how a command (check, test) expands its command-line paths
// into the files it works on.
type Rule struct {
	Cmd string // the command's name in messages
	// Named takes a path given on the command line that is not a folder:
	// nil, or why the command refuses it.
	Named func(p string) error
	// Found reports whether a file met in a folder walk is taken; an
	// error reports it as skipped.
	Found func(path string, d fs.DirEntry) (bool, error)
	// None says why a folder holding no taken file is refused (%s is the
	// folder).
	None string
}

// Expand expands paths: a file is taken when Named accepts it, a folder
// is walked (hidden folders and node_modules skipped) for the files Found
// accepts. What cannot be read is reported and skipped and the walk goes
// on; each refusal is written to stderr and makes ok false.
func (r Rule) Expand(paths []string, stderr io.Writer) (files []string, ok bool) {
	ok = true
	fail := func(format string, a ...any) {
		fmt.Fprintf(stderr, "forge-lsp "+r.Cmd+": "+format+"\n", a...)
		ok = false
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			fail("%v", err)
			continue
		}
		if !fi.IsDir() {
			if err := r.Named(p); err != nil {
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
			ok, err := r.Found(path, d)
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
			fail(r.None, p)
		}
	}
	return files, ok
}
