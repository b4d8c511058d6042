// Package cli implements the check, run and test subcommands.
package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/cmd/internal/findings"
	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/pmezard/go-difflib/difflib"
)

// The finding types are shared with the MCP server (cmd/internal/findings).
type (
	Diagnostic = findings.Diagnostic
	Fix        = findings.Fix
	Edit       = findings.Edit
	Rel        = findings.Rel
)

const checkUsage = `usage: forge-lsp check [flags] PATH...
       forge-lsp check --list-codes [--format text|json]

Checks prompts (Markdown whose frontmatter declares promptforge) and their
test files (NAME.test.yaml); folders are walked. Findings go to stdout; the
last line on stderr is "N files checked, N errors, N warnings". Exit status:
0 nothing at or above --fail-on, 1 a finding at or above it, 2 usage or
I/O errors (a path holding no prompt is one).

flags:
`

// Check implements `forge-lsp check`: it runs the analysis driver
// (analysis/checker.Check, the same one the language server uses) over
// the files and folders given and prints the findings. Test files are
// validated against their prompts. Exit status: 0 nothing at or above
// --fail-on, 1 a finding at or above it, 2 usage or I/O problems.
func Check(args []string, stdout, stderr io.Writer) int {
	return check(args, stdout, stderr, nil)
}

// CheckProcess is Check as the forge-lsp command runs it, owning the
// process (docs/lsp.md#performance): the parse caches are off, since
// each file is parsed once and they would only hold every file's parse
// and facts until their budget, and the collector is paced by the number
// and size of the files (paceGC).
func CheckProcess(args []string, stdout, stderr io.Writer) int {
	parse.LimitCaches(0)
	return check(args, stdout, stderr, paceGC)
}

// folderFiles is the number of files from which paceGC treats a check
// as a folder's.
const folderFiles = 8

// paceGC sets the collector's pace for a check of files, unless GOGC is
// set in the environment (or, for a few files, GOMEMLIMIT).
//
// A folder (folderFiles or more) runs at GOGC=200. Measured on 200 and
// 2,000 distinct 256-line prompts (peak RSS, CPU user+sys of the 2,000;
// load 4-8 on 2 cores): GOGC=400 40 and 47-50 MB, 3.1 s; GOGC=200 32 and
// 34-35 MB, 3.3-3.5 s (before: 87 and 438 MB, 5.4 s). A folder keeps 1-5
// MB live, so a GOGC above the default spares collections for a small
// fixed heap whose pages are reused file after file; 200 keeps the 2,000
// prompts' peak within 1.1x of the 200's (400 varied up to 1.4x with
// where the live heap peaked). No memory limit: a file whose live heap
// neared it would be collected without end.
//
// A few files run with a heap floor (floorGC): no collection until the
// heap reaches max(64 MiB, 64 bytes per input byte), the default pace
// after. A single check is short, and the default pace collects from a 4
// MB heap on: a 10,000-line prompt (220 KB, about 7 MB live at the end,
// about 30 MB allocated) went through 7 collections that cost 40% of the
// process's instructions (callgrind: 447 M at GOGC=100, 248 M without
// collections) and a third of its CPU time. 64 bytes per input byte is
// about twice the live heap a prompt keeps (31-32 bytes per byte at
// 10,000 and 50,000 lines), the peak the default pace reaches anyway, so
// a large file's peak memory stays what it was.
func paceGC(files []string) {
	if os.Getenv("GOGC") != "" {
		return
	}
	if len(files) >= folderFiles {
		debug.SetGCPercent(200)
		return
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var size int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	floorGC(max(64<<20, 64*size))
}

// gcFloorEnd is unreachable from the start; its finalizer runs after the
// first collection.
type gcFloorEnd struct{ _ *int }

// floorGC turns the collector off until the runtime's memory reaches
// limit (a soft memory limit does the first collection), then restores
// the pace and limit in force before: limit is a floor under the heap
// goal, not a ceiling, so a heap that outgrows it is never collected
// without end.
func floorGC(limit int64) {
	percent := debug.SetGCPercent(-1)
	prevLimit := debug.SetMemoryLimit(limit)
	runtime.SetFinalizer(&gcFloorEnd{}, func(*gcFloorEnd) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(prevLimit)
	})
}

func check(args []string, stdout, stderr io.Writer, pace func(files []string)) int {
	fl := flag.NewFlagSet("check", flag.ContinueOnError)
	format := fl.String("format", "text", "output format: text, json or sarif")
	listCodes := fl.Bool("list-codes", false, "list every diagnostic code with its default severity and exit")
	configPath := fl.String("config", "", "workspace configuration file (default: the nearest "+analysis.ConfigFileName+" above each file)")
	failOn := fl.String("fail-on", "error", "exit 1 when a finding has this severity or a higher one: error or warning")
	fix := fl.Bool("fix", false, "apply the suggested fixes marked safe, print each change on stderr, then report what is left")
	diff := fl.Bool("diff", false, "print the changes --fix would make as a unified diff, write nothing, exit 1 if anything would change")
	usage := func(w io.Writer) { printUsage(fl, checkUsage, w) }
	paths, help, ok := parseAnywhere(fl, args, checkUsage, stdout, stderr)
	if help {
		return 0
	}
	if !ok {
		return 2
	}
	switch *format {
	case "text", "json", "sarif":
	default:
		fmt.Fprintf(stderr, "forge-lsp check: unknown format %q (want text, json or sarif)\n", *format)
		return 2
	}
	switch *failOn {
	case "error", "warning":
	default:
		fmt.Fprintf(stderr, "forge-lsp check: --fail-on %q: want error or warning\n", *failOn)
		return 2
	}
	if *listCodes {
		return printCodes(*format, stdout, stderr)
	}
	if len(paths) == 0 {
		usage(stderr)
		return 2
	}
	if *fix && *diff {
		fmt.Fprintln(stderr, "forge-lsp check: --fix and --diff exclude each other (--diff writes nothing)")
		return 2
	}
	var fixed *analysis.Config
	warned := map[string]bool{}
	if *configPath != "" {
		data, err := fsread.ReadFile(*configPath, fsread.Config)
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
	files, code := collect(paths, stderr)
	if pace != nil {
		pace(files)
	}
	out := &findingsOut{format: *format, w: stdout}
	checked, changed := 0, 0
	configs := &configCache{fixed: fixed}
	work := func(f string) *fileResult { return checkOne(f, configs, *fix || *diff) }
	stopped := false
	checkFiles(files, runtime.GOMAXPROCS(0), work, func(r *fileResult) bool {
		if r.readErr != nil {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", r.readErr)
			code = 2
			return true
		}
		checked++
		if r.cfgErr != nil {
			fmt.Fprintf(stderr, "forge-lsp check: %v\n", r.cfgErr)
			stopped = true
			return false
		}
		if fixed == nil {
			warnUnknownCodes(r.cfg, warned, stderr)
		}
		found := r.found
		if (*fix || *diff) && !r.test {
			log := stderr
			if *diff {
				log = io.Discard
			}
			nb, nfound := fixAll(r.path, r.content, found, r.cfg, log)
			switch {
			case string(nb) == string(r.content):
			case *diff:
				changed++
				writeDiff(stdout, r.path, r.content, nb)
				return true
			default:
				if err := writeFixed(r.path, nb); err != nil {
					fmt.Fprintf(stderr, "forge-lsp check: --fix: %v\n", err)
					code = 2
				} else {
					found = nfound
				}
			}
		}
		if !*diff {
			out.add(found)
		}
		return true
	})
	if stopped {
		if !*diff {
			out.close() // what was printed stays well-formed
		}
		return 2
	}
	if *diff {
		fmt.Fprintf(stderr, "%d %s checked, %d would change\n", checked, plural(checked, "file", "files"), changed)
		if code != 0 {
			return code
		}
		if changed > 0 {
			return 1
		}
		return 0
	}
	out.close()
	errs, warns := out.errs, out.warns
	fmt.Fprintf(stderr, "%d %s checked, %d %s, %d %s\n", checked, plural(checked, "file", "files"), errs, plural(errs, "error", "errors"), warns, plural(warns, "warning", "warnings"))
	if code != 0 {
		return code
	}
	if errs > 0 || (*failOn == "warning" && warns > 0) {
		return 1
	}
	return 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fileResult is one file's check, made by a worker of checkFiles.
type fileResult struct {
	path string
	// readErr is why the file could not be read; nothing else is set.
	readErr error
	// cfg is the configuration the file was checked with; cfgErr is why
	// it could not be found (the file is then not checked).
	cfg    *analysis.Config
	cfgErr error
	test   bool
	found  []Diagnostic
	// content is kept for --fix only.
	content []byte
}

// checkOne reads and checks one file (a prompt or a test file).
func checkOne(path string, configs *configCache, keep bool) *fileResult {
	r := &fileResult{path: path}
	b, err := readRegular(path)
	if err != nil {
		r.readErr = err
		return r
	}
	if keep {
		r.content = b
	}
	if testrun.IsTestFile(path) {
		r.test = true
		r.found = checkTestFile(path, b)
		return r
	}
	if r.cfg, r.cfgErr = configs.of(path); r.cfgErr != nil {
		return r
	}
	r.found = checkFile(path, b, r.cfg)
	return r
}

// configCache finds each folder's configuration once (the nearest
// .forge-lsp.json above it), for all workers; fixed, when set, is the
// --config file and wins.
type configCache struct {
	fixed *analysis.Config
	mu    sync.Mutex
	dirs  map[string]*dirConfig
}

type dirConfig struct {
	once sync.Once
	cfg  *analysis.Config
	err  error
}

func (c *configCache) of(file string) (*analysis.Config, error) {
	if c.fixed != nil {
		return c.fixed, nil
	}
	dir := filepath.Dir(file)
	c.mu.Lock()
	if c.dirs == nil {
		c.dirs = map[string]*dirConfig{}
	}
	e := c.dirs[dir]
	if e == nil {
		e = &dirConfig{}
		c.dirs[dir] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.cfg, e.err = analysis.FindConfig(file) })
	return e.cfg, e.err
}

// checkFiles runs work on every file, on up to workers goroutines, and
// calls emit with the results in the order of files, so the output is
// the same on one core or many. At most 2*workers results wait to be
// emitted: memory follows the work in flight, not the number of files.
// emit returning false stops the check (files not yet started are not
// read).
func checkFiles(files []string, workers int, work func(string) *fileResult, emit func(*fileResult) bool) {
	workers = max(1, workers)
	queue := make(chan chan *fileResult, 2*workers)
	sem := make(chan struct{}, workers)
	stop := make(chan struct{})
	go func() {
		defer close(queue)
		for _, f := range files {
			ch := make(chan *fileResult, 1)
			select {
			case queue <- ch:
			case <-stop:
				return
			}
			select {
			case sem <- struct{}{}:
			case <-stop:
				ch <- &fileResult{path: f}
				return
			}
			go func() {
				defer func() { <-sem }()
				ch <- work(f)
			}()
		}
	}()
	for ch := range queue {
		if !emit(<-ch) {
			close(stop)
			for ch := range queue {
				<-ch // wait for the files in flight
			}
			return
		}
	}
}

// checkTestFile validates a test file against its prompt.
func checkTestFile(path string, content []byte) []Diagnostic {
	return findings.CheckTestFile(path, content)
}

// applySafeFixes applies the first suggested fix of each finding when it
// is marked safe and overlaps no other applied edit; it prints each change
// on stderr and returns the new content and how many fixes it applied.
func applySafeFixes(path string, content []byte, diags []Diagnostic, stderr io.Writer) ([]byte, int) {
	type pending struct {
		d     Diagnostic
		edits []analysis.TextEdit
	}
	var todo []pending
	for _, d := range diags {
		if len(d.Fixes) == 0 || !d.Fixes[0].Safe {
			continue
		}
		todo = append(todo, pending{d, d.FixSpans[0]})
	}
	if len(todo) == 0 {
		return content, 0
	}
	var all []analysis.TextEdit
	applied := 0
	for _, p := range todo {
		overlap := false
		for _, e := range p.edits {
			for _, a := range all {
				if e.Span.Start < a.Span.End && a.Span.Start < e.Span.End || e.Span.Start == a.Span.Start {
					overlap = true
				}
			}
		}
		if overlap {
			continue
		}
		all = append(all, p.edits...)
		applied++
		fmt.Fprintf(stderr, "%s:%d:%d: fixed: %s [%s]\n", path, p.d.Line, p.d.Column, p.d.Fixes[0].Message, p.d.Code)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Span.Start > all[j].Span.Start })
	out := append([]byte(nil), content...)
	for _, e := range all {
		out = append(out[:e.Span.Start], append([]byte(e.NewText), out[e.Span.End:]...)...)
	}
	return out, applied
}

// maxFixRounds bounds fixAll: a round re-checks the file, so fixes that
// overlapped one applied before (two old forms in one call) get their turn.
const maxFixRounds = 8

// fixAll applies safe fixes round after round until none applies (or
// maxFixRounds), and returns the content and its findings. Fixes are
// idempotent: a second fixAll on its result changes nothing.
func fixAll(path string, content []byte, found []Diagnostic, cfg *analysis.Config, log io.Writer) ([]byte, []Diagnostic) {
	for range maxFixRounds {
		nb, n := applySafeFixes(path, content, found, log)
		if n == 0 || string(nb) == string(content) {
			break
		}
		content = nb
		found = checkFile(path, content, cfg)
	}
	return content, found
}

// writeDiff prints the unified diff from a to b, as `gofmt -d` does.
func writeDiff(w io.Writer, path string, a, b []byte) {
	text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: diffLines(a), B: diffLines(b),
		FromFile: path + ".orig", ToFile: path, Context: 3})
	fmt.Fprint(w, text)
}

// diffLines splits text into lines that keep their "\n" (difflib's
// SplitLines adds an empty last line to text that ends in one).
func diffLines(text []byte) []string {
	lines := strings.SplitAfter(string(text), "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n"
	return lines
}

// writeFixed replaces path's content, keeping its mode.
func writeFixed(path string, data []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".forge-fix"
	if err := os.WriteFile(tmp, data, fi.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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

// checkFile checks one file once: no later analysis of it would read
// the passes' per-chunk memos, so they are not stored (Config.Once).
func checkFile(path string, content []byte, cfg *analysis.Config) []Diagnostic {
	once := analysis.Config{Once: true}
	if cfg != nil {
		once = *cfg
		once.Once = true
	}
	return findings.Check(path, content, &once)
}

// collect expands the command-line paths: folders are walked for *.md
// files that declare `promptforge:` in their frontmatter and for test
// files (NAME.test.yaml); a file named explicitly must be one of those,
// and a folder must hold at least one, or it is refused.
func collect(paths []string, stderr io.Writer) ([]string, int) {
	return pathRule{
		cmd: "check",
		named: func(p string) error {
			if testrun.IsTestFile(p) {
				return nil
			}
			b, err := readRegular(p)
			if err != nil {
				return err
			}
			if !parse.DeclaresPromptforge(b) {
				return fmt.Errorf("%s is not a PromptForge prompt: its frontmatter does not declare `promptforge: 1` (add it, or leave the file out)", p)
			}
			return nil
		},
		found: func(path string, d fs.DirEntry) (bool, error) {
			if foundTest(path, d) {
				return true, nil
			}
			if !strings.HasSuffix(path, ".md") {
				return false, nil
			}
			b, err := readRegular(path)
			if err != nil {
				return false, err
			}
			return parse.DeclaresPromptforge(b), nil
		},
		none: "%s holds no PromptForge prompt (no .md file declares `promptforge: 1`)",
	}.expand(paths, stderr)
}
