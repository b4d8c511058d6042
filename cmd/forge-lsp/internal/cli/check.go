// Package cli implements the check and run subcommands.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// Diagnostic is one finding in the CLI's output coordinates: 1-based lines,
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
}

// Check implements `forge-lsp check`.
func Check(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("check", flag.ContinueOnError)
	fl.SetOutput(stderr)
	format := fl.String("format", "text", "output format: text or json")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: forge-lsp check [--format text|json] PATH...")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "forge-lsp check: unknown format %q (want text or json)\n", *format)
		return 2
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	files, code := collect(fl.Args(), stderr)
	diags := []Diagnostic{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
			code = 2
			continue
		}
		diags = append(diags, checkFile(f, b)...)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(diags)
	} else {
		for _, d := range diags {
			fmt.Fprintf(stdout, "%s:%d:%d: %s: %s [%s]\n", d.Path, d.Line, d.Column, d.Severity, d.Message, d.Code)
		}
	}
	if code != 0 {
		return code
	}
	for _, d := range diags {
		if d.Severity == "error" {
			return 1
		}
	}
	return 0
}

func checkFile(path string, content []byte) []Diagnostic {
	p := parse.Parse(path, content)
	out := make([]Diagnostic, 0, len(p.Errors))
	for _, e := range p.Errors {
		l, c := p.File.Position(e.Span.Start)
		el, ec := p.File.Position(e.Span.End)
		out = append(out, Diagnostic{Path: path, Line: l, Column: c, EndLine: el, EndColumn: ec,
			Severity: "error", Code: e.Code, Message: e.Message})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

// collect expands the command-line paths: folders are walked for *.md
// files that declare `promptforge:` in their frontmatter; a file named
// explicitly must declare it, or it is refused.
func collect(paths []string, stderr io.Writer) ([]string, int) {
	var files []string
	code := 0
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
			code = 2
			continue
		}
		if !fi.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
				code = 2
				continue
			}
			if !parse.DeclaresPromptforge(b) {
				fmt.Fprintf(stderr, "forge-lsp check: %s is not a PromptForge prompt: its frontmatter does not declare `promptforge: 1` (add it, or leave the file out)\n", p)
				code = 2
				continue
			}
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".md") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if parse.DeclaresPromptforge(b) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipDir) {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
			code = 2
		}
	}
	return files, code
}
