package fsread

import (
	"errors"
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"io/fs"
	"os"
	"path/filepath"
)

// RepoRoot is the repository a file in dir belongs to: the nearest folder
// at or above dir holding a .git entry, or dir itself when none does. What
// a repository's files name (a test file's prompt, cassettes and traces, a
// debug launch's trace, cassettes and store folder) stays inside it
// (docs/security.md#writes).
func RepoRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

// resolve returns path with every link resolved, as far as the path
// exists; the missing rest is joined unchanged (it holds no links yet).
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for p := abs; ; {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// Inside reports an error when path, links resolved, is not inside root
// (links resolved too): a repository (RepoRoot), or a trace folder. what
// names the path in the message. Containment is source.InDir's rule.
func Inside(root, path, what string) error {
	r, err := resolve(root)
	if err != nil {
		return err
	}
	p, err := resolve(path)
	if err != nil {
		return fmt.Errorf("%s %s: %v", what, filepath.ToSlash(path), err)
	}
	if !source.InDir(r, p) {
		return fmt.Errorf("%s %s resolves to %s, outside %s: keep it inside (links included)", what, filepath.ToSlash(path), filepath.ToSlash(p), filepath.ToSlash(r))
	}
	return nil
}
