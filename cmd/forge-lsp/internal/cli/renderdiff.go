package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/render"
)

// gitChange is one changed file between a revision and the working tree,
// paths relative to the repository's top.
type gitChange struct {
	status   byte // A, D, M, R (C is treated as A)
	old, new string
}

// renderDiff implements `forge-lsp render --diff REV [PATH...]`: the
// prompts that changed between REV and the working tree, read through
// git (no checkout), rendered on both sides and compared.
func renderDiff(fl renderFlags, paths []string, stdout, stderr io.Writer) int {
	topOut, err := gitOut("", "rev-parse", "--show-toplevel")
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp render --diff: not in a git repository: %v\n", err)
		return exitUsage
	}
	top := strings.TrimSpace(string(topOut))
	if _, err := gitOut("", "rev-parse", "--verify", "--quiet", fl.diff+"^{commit}"); err != nil {
		fmt.Fprintf(stderr, "forge-lsp render --diff: %q is not a revision of this repository\n", fl.diff)
		return exitUsage
	}
	changes, err := gitChanges(top, fl.diff, paths)
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp render --diff: %v\n", err)
		return exitUsage
	}
	code := exitOK
	var diffs []*render.FileDiff
	for _, c := range changes {
		if !strings.HasSuffix(c.new, ".md") && !strings.HasSuffix(c.old, ".md") {
			continue
		}
		var oldSrc, newSrc []byte
		if c.status != 'A' {
			if oldSrc, err = gitOut(top, "show", fl.diff+":"+c.old); err != nil {
				fmt.Fprintf(stderr, "forge-lsp render --diff: %s at %s: %v\n", c.old, fl.diff, err)
				code = exitRunError
				continue
			}
		}
		if c.status != 'D' {
			if newSrc, err = os.ReadFile(filepath.Join(top, filepath.FromSlash(c.new))); err != nil {
				fmt.Fprintf(stderr, "forge-lsp render --diff: %v\n", err)
				code = exitRunError
				continue
			}
		}
		oldRes, ok1 := renderSide(fl, top, c.old, oldSrc, fl.diff, stderr)
		newRes, ok2 := renderSide(fl, top, c.new, newSrc, "", stderr)
		if !ok1 || !ok2 {
			code = exitRunError
		}
		if oldRes == nil && newRes == nil {
			continue
		}
		path := c.new
		if path == "" {
			path = c.old
		}
		oldPath := ""
		if c.status == 'R' {
			oldPath = c.old
		}
		diffs = append(diffs, render.Diff(path, oldPath, oldRes, newRes))
	}
	if err := render.WriteDiff(stdout, diffs, fl.format); err != nil {
		fmt.Fprintf(stderr, "forge-lsp render: %v\n", err)
		return exitRunError
	}
	return code
}

// renderSide renders one side of a change; nil for a file that is not
// (or no longer) a prompt. ok is false when a prompt could not be
// rendered (reported on stderr).
func renderSide(fl renderFlags, top, path string, src []byte, rev string, stderr io.Writer) (*render.Result, bool) {
	if src == nil || !parse.DeclaresPromptforge(src) {
		return nil, true
	}
	o := fl.options(path, src)
	// The tools file of the working tree serves both sides.
	o.ToolsDir = filepath.Join(top, filepath.Dir(filepath.FromSlash(path)))
	res, err := render.Render(context.Background(), o)
	if err != nil {
		where := path
		if rev != "" {
			where += " at " + rev
		}
		fmt.Fprintf(stderr, "forge-lsp render --diff: %s: %v\n", where, err)
		return nil, false
	}
	return res, true
}

// gitChanges lists the files changed between rev and the working tree
// (renames detected), and the untracked files, under paths.
func gitChanges(top, rev string, paths []string) ([]gitChange, error) {
	args := append([]string{"diff", "--name-status", "-M", "-z", rev, "--"}, paths...)
	out, err := gitOut("", args...)
	if err != nil {
		return nil, err
	}
	var changes []gitChange
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i < len(f); i++ {
		if f[i] == "" {
			continue
		}
		st := f[i][0]
		switch st {
		case 'R', 'C':
			if i+2 >= len(f) {
				return nil, fmt.Errorf("unexpected git diff output")
			}
			c := gitChange{status: 'R', old: f[i+1], new: f[i+2]}
			if st == 'C' {
				c = gitChange{status: 'A', new: f[i+2]}
			}
			changes = append(changes, c)
			i += 2
		default:
			if i+1 >= len(f) {
				return nil, fmt.Errorf("unexpected git diff output")
			}
			c := gitChange{status: st, old: f[i+1], new: f[i+1]}
			switch st {
			case 'A':
				c.old = ""
			case 'D':
				c.new = ""
			default:
				c.status = 'M'
			}
			changes = append(changes, c)
			i++
		}
	}
	args = append([]string{"ls-files", "--others", "--exclude-standard", "--full-name", "-z", "--"}, paths...)
	if out, err = gitOut("", args...); err != nil {
		return nil, err
	}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			changes = append(changes, gitChange{status: 'A', new: p})
		}
	}
	return changes, nil
}

// gitOut runs git in dir ("" for the current directory) and returns its
// standard output.
func gitOut(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("git %s: %s", args[0], msg)
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}
