package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/format"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

const fmtUsage = `usage: forge-lsp fmt [-w | --check | --diff] PATH...

Formats prompts (Markdown whose frontmatter declares promptforge): Lua
fences as StyLua formats Lua, with the options of the nearest stylua.toml
or .stylua.toml above each file; headings, fences and frontmatter
normalised; prose never changed (docs/formatting.md). Folders are walked;
- (or no PATH) reads standard input.

By default the formatted text goes to stdout. A file that does not parse
is reported with its location and left as it is; a folder run goes on.
Exit status: 0 done, 1 --check found a file to change, 2 a file could not
be read, parsed or formatted, or a usage error.

`

// Fmt implements `forge-lsp fmt`.
func Fmt(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fmt", flag.ContinueOnError)
	write := fl.Bool("w", false, "write the result to the file instead of stdout (atomically, keeping its mode)")
	check := fl.Bool("check", false, "write nothing; list the files that would change and exit 1 if any")
	diff := fl.Bool("diff", false, "print the changes as a unified diff instead of the formatted text")
	paths, help, ok := parseAnywhere(fl, args, fmtUsage, stdout, stderr)
	if help {
		return 0
	}
	if !ok {
		return exitUsage
	}
	if *write && *check {
		fmt.Fprintln(stderr, "forge-lsp fmt: -w and --check exclude each other (--check writes nothing)")
		return exitUsage
	}
	f := &fmtRun{write: *write, check: *check, diff: *diff, stdout: stdout, stderr: stderr, configs: map[string]configResult{}}
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	code := exitOK
	var files []string
	for _, p := range paths {
		if p == "-" {
			if *write {
				fmt.Fprintln(stderr, "forge-lsp fmt: -w cannot write standard input")
				code = exitUsage
				continue
			}
			data, err := io.ReadAll(fsread.Limit("standard input", stdin, fsread.Prompt))
			if err != nil {
				fmt.Fprintf(stderr, "forge-lsp fmt: %v\n", err)
				code = exitUsage
				continue
			}
			wd, _ := os.Getwd()
			code = worse(code, f.one("<standard input>", wd, data))
			continue
		}
		fs, c := collectPrompts(p, stderr)
		code = worse(code, c)
		files = append(files, fs...)
	}
	for _, p := range files {
		data, err := readRegular(p)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp fmt: %v\n", err)
			code = worse(code, exitUsage)
			continue
		}
		code = worse(code, f.one(p, filepath.Dir(p), data))
	}
	return code
}

// worse keeps the more serious exit code: usage and file errors (2)
// over --check's finding (1).
func worse(a, b int) int {
	if b > a {
		return b
	}
	return a
}

type fmtRun struct {
	write, check, diff bool
	stdout, stderr     io.Writer
	configs            map[string]configResult
}

type configResult struct {
	opt  format.Options
	path string
	err  error
}

// options returns the formatter options for files in dir.
func (f *fmtRun) options(dir string) (format.Options, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	r, ok := f.configs[abs]
	if !ok {
		r.opt, r.path, r.err = format.Lookup(abs, func(p string) ([]byte, error) {
			return fsread.ReadFile(p, fsread.Config)
		})
		f.configs[abs] = r
	}
	return r.opt, r.err
}

// one formats one file's content and reports it as the flags ask.
func (f *fmtRun) one(name, dir string, data []byte) int {
	opt, err := f.options(dir)
	if err != nil {
		fmt.Fprintf(f.stderr, "forge-lsp fmt: %v\n", err)
		return exitUsage
	}
	out, err := format.Source(name, data, opt)
	if err != nil {
		fmt.Fprintf(f.stderr, "forge-lsp fmt: %v\n", err)
		return exitUsage
	}
	changed := !bytes.Equal(out, data)
	switch {
	case f.check:
		if changed {
			fmt.Fprintln(f.stdout, name)
			if f.diff {
				writeDiff(f.stdout, name, data, out)
			}
			return 1
		}
		return exitOK
	case f.write:
		if changed {
			if err := writeFixed(name, out); err != nil {
				fmt.Fprintf(f.stderr, "forge-lsp fmt: %v\n", err)
				return exitUsage
			}
		}
		if f.diff && changed {
			writeDiff(f.stdout, name, data, out)
		}
	case f.diff:
		if changed {
			writeDiff(f.stdout, name, data, out)
		}
	default:
		f.stdout.Write(out)
	}
	return exitOK
}

// collectPrompts expands one command-line path into prompt files.
func collectPrompts(p string, stderr io.Writer) ([]string, int) {
	return pathRule{
		cmd: "fmt",
		named: func(p string) error {
			b, err := readRegular(p)
			if err != nil {
				return err
			}
			if !parse.DeclaresPromptforge(b) {
				return fmt.Errorf("%s is not a PromptForge prompt: its frontmatter does not declare `promptforge: 1` (fmt formats prompts only)", p)
			}
			return nil
		},
		found: func(path string, d fs.DirEntry) (bool, error) {
			if !strings.HasSuffix(path, ".md") || !d.Type().IsRegular() {
				return false, nil
			}
			b, err := readRegular(path)
			if err != nil {
				return false, err
			}
			return parse.DeclaresPromptforge(b), nil
		},
		none: "%s holds no PromptForge prompt (no .md file declares `promptforge: 1`)",
	}.expand([]string{p}, stderr)
}
