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
	"strings"
	"text/tabwriter"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
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
	Analyzer  string `json:"analyzer,omitempty"`
	Fixes     []Fix  `json:"fixes,omitempty"`
	Related   []Rel  `json:"related,omitempty"`

	// span and file keep the byte coordinates for SARIF's UTF-16 columns.
	span     source.Span
	file     *source.File
	fixSpans [][]analysis.TextEdit
}

// Fix is a suggested fix in CLI coordinates.
type Fix struct {
	Message string `json:"message"`
	Edits   []Edit `json:"edits"`
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

// Check implements `forge-lsp check`: it runs the analysis driver
// (analysis/checker.Check, the same one the language server uses) over
// the files and folders given and prints the findings. Exit status: 0 no
// errors, 1 at least one error-severity finding, 2 usage or I/O problems.
func Check(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("check", flag.ContinueOnError)
	fl.SetOutput(stderr)
	format := fl.String("format", "text", "output format: text, json or sarif")
	listCodes := fl.Bool("list-codes", false, "list every diagnostic code with its default severity and exit")
	configPath := fl.String("config", "", "workspace configuration file (default: the nearest "+analysis.ConfigFileName+" above each file)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: forge-lsp check [--format text|json|sarif] [--config FILE] PATH...\n       forge-lsp check --list-codes [--format text|json]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	switch *format {
	case "text", "json", "sarif":
	default:
		fmt.Fprintf(stderr, "forge-lsp check: unknown format %q (want text, json or sarif)\n", *format)
		return 2
	}
	if *listCodes {
		return printCodes(*format, stdout, stderr)
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	var fixed *analysis.Config
	warned := map[string]bool{}
	if *configPath != "" {
		data, err := os.ReadFile(*configPath)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
			return 2
		}
		if fixed, err = analysis.ParseConfig(*configPath, data); err != nil {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
			return 2
		}
		warnUnknownCodes(fixed, warned, stderr)
	}
	files, code := collect(fl.Args(), stderr)
	configs := map[string]*analysis.Config{}
	diags := []Diagnostic{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
			code = 2
			continue
		}
		cfg := fixed
		if cfg == nil {
			dir := filepath.Dir(f)
			c, seen := configs[dir]
			if !seen {
				c, err = analysis.FindConfig(f)
				if err != nil {
					fmt.Fprintf(stderr, "forge-lsp check: %v\n", err)
					return 2
				}
				configs[dir] = c
				warnUnknownCodes(c, warned, stderr)
			}
			cfg = c
		}
		diags = append(diags, checkFile(f, b, cfg)...)
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(diags)
	case "sarif":
		writeSARIF(stdout, diags)
	default:
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

// warnUnknownCodes prints one warning per unknown code of a configuration
// file; warned remembers the files already reported in this invocation.
func warnUnknownCodes(c *analysis.Config, warned map[string]bool, stderr io.Writer) {
	if c == nil || warned[c.Path] {
		return
	}
	warned[c.Path] = true
	for _, code := range c.UnknownCodes(checker.KnownCode) {
		fmt.Fprintf(stderr, "forge-lsp check: %s: unknown code %q (see forge-lsp check --list-codes)\n", c.Path, code)
	}
}

func printCodes(format string, stdout, stderr io.Writer) int {
	type row struct {
		Code     string `json:"code"`
		Severity string `json:"severity"`
		Analyzer string `json:"analyzer"`
		Summary  string `json:"summary"`
	}
	var rows []row
	for _, c := range checker.Codes() {
		rows = append(rows, row{c.Name, c.Severity.String(), c.Analyzer.Name, c.Summary})
	}
	switch format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
	case "sarif":
		fmt.Fprintln(stderr, "forge-lsp check: --list-codes prints text or json")
		return 2
	default:
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CODE\tSEVERITY\tANALYZER\tSUMMARY")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Code, r.Severity, r.Analyzer, r.Summary)
		}
		tw.Flush()
		fmt.Fprintln(stdout, "\nEvery code is documented with a bad and a fixed example in docs/codes.md.")
	}
	return 0
}

func checkFile(path string, content []byte, cfg *analysis.Config) []Diagnostic {
	p := parse.Parse(path, content)
	f := p.File
	found := checker.Check(p, cfg)
	out := make([]Diagnostic, 0, len(found))
	for _, d := range found {
		l, c := f.Position(d.Span.Start)
		el, ec := f.Position(d.Span.End)
		cd := Diagnostic{Path: path, Line: l, Column: c, EndLine: el, EndColumn: ec,
			Severity: d.Severity.String(), Code: d.Code, Message: d.Message, Analyzer: d.Analyzer,
			span: d.Span, file: f}
		for _, fx := range d.SuggestedFixes {
			cf := Fix{Message: fx.Message}
			for _, e := range fx.Edits {
				l, c := f.Position(e.Span.Start)
				el, ec := f.Position(e.Span.End)
				cf.Edits = append(cf.Edits, Edit{Line: l, Column: c, EndLine: el, EndColumn: ec, NewText: e.NewText})
			}
			cd.Fixes = append(cd.Fixes, cf)
			cd.fixSpans = append(cd.fixSpans, fx.Edits)
		}
		for _, r := range d.Related {
			l, c := f.Position(r.Span.Start)
			cd.Related = append(cd.Related, Rel{Line: l, Column: c, Message: r.Message})
		}
		out = append(out, cd)
	}
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
