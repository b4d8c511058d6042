package cli

import (
	"io"
	"io/fs"

	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/cmd/internal/walk"
)

// pathRule is how a command (check, test) expands its command-line
// paths (cmd/internal/walk).
type pathRule struct {
	cmd   string
	named func(p string) error
	found walkFound
	none  string
}

type walkFound = func(path string, d fs.DirEntry) (bool, error)

// expand is walk.Rule.Expand with the command's exit code: exitUsage
// when anything was refused.
func (r pathRule) expand(paths []string, stderr io.Writer) ([]string, int) {
	files, ok := walk.Rule{Cmd: r.cmd, Named: r.named, Found: r.found, None: r.none}.Expand(paths, stderr)
	if !ok {
		return files, exitUsage
	}
	return files, exitOK
}

// foundTest is testrun.Found.
var foundTest = testrun.Found
