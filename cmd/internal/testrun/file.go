// Package testrun implements prompt regression tests: the NAME.test.yaml
// file format, its validation, the matchers, and a runner that replays
// every case from its cassette (or runs it live to record one). The
// `forge-lsp test` command, `check` and the language server share it.
package testrun

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
	"go.yaml.in/yaml/v3"
)

// Suffix is the file name ending of a test file: NAME.test.yaml tests
// NAME.md.
const Suffix = ".test.yaml"

// IsTestFile reports whether path names a test file.
func IsTestFile(path string) bool { return strings.HasSuffix(path, Suffix) }

// Severity of a Diag.
const (
	SevError   = "error"
	SevWarning = "warning"
)

// Diag is one problem in a test file, 1-based line and byte column.
type Diag struct {
	Line, Col, EndCol int
	Severity          string
	Code              string
	Message           string
}

// Pos is a place in the test file.
type Pos struct{ Line, Col, EndCol int }

// File is a parsed test file.
type File struct {
	// Path is the test file as given; Dir its folder.
	Path, Dir string
	// Prompt is the path of the prompt under test (Dir-relative names are
	// joined with Dir); PromptPos is where `prompt:` sits (zero when the
	// default NAME.md is used).
	Prompt    string
	PromptPos Pos
	Cases     []*Case
	// Diags are the problems found by Parse and Validate, in line order.
	Diags []Diag
	// Top is the position of the first line, where "Run all" belongs.
	Top Pos
}

// Case is one test case.
type Case struct {
	Name string
	// Pos is the case's `name:` value; Start is the line of the list item.
	Pos   Pos
	Start int
	Input string
	// Section is the section to run alone ("" runs the whole prompt).
	Section    string
	SectionPos Pos
	// Store seeds the run's store.
	Store []StoreFile
	// Cassette is the cassette path (joined with the file's folder);
	// CassettePos is where it is written, or the case's name when the
	// default path is used.
	Cassette    string
	CassettePos Pos
	// Skip, when non-empty, is why the case is skipped.
	Skip   string
	Expect Expect
	// PassRate, when above 0, is the share of repeated runs
	// (--repeat) the case must pass; PassRatePos is where it is written.
	PassRate    float64
	PassRatePos Pos
}

// StoreFile is one seeded store file.
type StoreFile struct {
	Path, Text string
}

// Expect holds a case's expectations.
type Expect struct {
	Output *Matcher
	// Store holds one matcher per store path, in file order.
	Store       []StoreExpect
	ToolsCalled []Named
	Sections    []Named
	Error       *Matcher
	// Trajectory (trajectory.go): the expected tool calls and their
	// order, aliases never called, and bounds on rounds, tokens and the
	// models that answered.
	ToolCalls []CallExpect
	Order     string
	OrderPos  Pos
	Never     []Named
	Rounds    *Rounds
	Tokens    *Tokens
	Models    []Named
	// Judge grades the output against a rubric (judge.go).
	Judge *Judge
}

// StoreExpect is a matcher for one store file.
type StoreExpect struct {
	Path    string
	Matcher *Matcher
}

// Named is a tool alias or a section heading with its position.
type Named struct {
	Name string
	Pos  Pos
}

// HasErrors reports whether any diagnostic is an error.
func (f *File) HasErrors() bool {
	for _, d := range f.Diags {
		if d.Severity == SevError {
			return true
		}
	}
	return false
}

func (f *File) errorf(p Pos, code, format string, a ...any) {
	f.Diags = append(f.Diags, Diag{Line: p.Line, Col: p.Col, EndCol: p.EndCol, Severity: SevError, Code: code, Message: fmt.Sprintf(format, a...)})
}

func (f *File) warnf(p Pos, code, format string, a ...any) {
	f.Diags = append(f.Diags, Diag{Line: p.Line, Col: p.Col, EndCol: p.EndCol, Severity: SevWarning, Code: code, Message: fmt.Sprintf(format, a...)})
}

func (f *File) sortDiags() {
	sort.SliceStable(f.Diags, func(i, j int) bool {
		a, b := f.Diags[i], f.Diags[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

func pos(n *yaml.Node) Pos {
	end := n.Column
	if n.Kind == yaml.ScalarNode && !strings.Contains(n.Value, "\n") {
		end = n.Column + len(n.Value)
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			end += 2
		}
	} else {
		end = n.Column + 1
	}
	return Pos{Line: n.Line, Col: n.Column, EndCol: end}
}

// Parse reads a test file's text. It never fails: every problem becomes a
// Diag with its line. The prompt defaults to NAME.md beside NAME.test.yaml.
func Parse(path string, data []byte) *File {
	f := &File{Path: path, Dir: filepath.Dir(path), Top: Pos{Line: 1, Col: 1, EndCol: 1}}
	base := filepath.Base(path)
	stem := strings.TrimSuffix(base, Suffix)
	f.Prompt = filepath.Join(f.Dir, stem+".md")
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		f.errorf(yamlErrPos(err), "test-yaml", "%s", yamlErrMsg(err))
		return f
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		f.errorf(f.Top, "test-schema", "empty test file: add `cases:` with at least one case (see docs/testing.md)")
		return f
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		f.errorf(pos(root), "test-schema", "a test file is a mapping with `cases:` (and optionally `prompt:`)")
		return f
	}
	f.Top = Pos{Line: root.Line, Col: root.Column, EndCol: root.Column + 1}
	var cases *yaml.Node
	eachKey(f, root, "test file", []string{"prompt", "cases"}, func(k, v *yaml.Node) {
		switch k.Value {
		case "prompt":
			if s, ok := str(f, v, "prompt"); ok {
				if s == "" {
					f.errorf(pos(v), "test-schema", "`prompt` is empty: name the prompt file, e.g. `prompt: %s.md`", stem)
					return
				}
				f.Prompt = filepath.Join(f.Dir, filepath.FromSlash(s))
				f.PromptPos = pos(v)
			}
		case "cases":
			cases = v
		}
	})
	if cases == nil {
		f.errorf(f.Top, "test-schema", "missing `cases:`: add a list of cases, each with a `name`")
		f.sortDiags()
		return f
	}
	if cases.Kind != yaml.SequenceNode {
		f.errorf(pos(cases), "test-schema", "`cases` must be a list of cases (each item starts with `- name: ...`)")
		f.sortDiags()
		return f
	}
	seen := map[string]Pos{}
	for _, item := range cases.Content {
		c := parseCase(f, item, stem)
		if c == nil {
			continue
		}
		if prev, dup := seen[c.Name]; dup {
			f.errorf(c.Pos, "test-duplicate", "duplicate case name %q (first at line %d): case names must be unique in a file", c.Name, prev.Line)
			continue
		}
		seen[c.Name] = c.Pos
		f.Cases = append(f.Cases, c)
	}
	f.sortDiags()
	return f
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

func yamlErrPos(err error) Pos {
	if m := yamlLineRE().FindStringSubmatch(err.Error()); m != nil {
		var n int
		fmt.Sscan(m[1], &n)
		return Pos{Line: n, Col: 1, EndCol: 2}
	}
	return Pos{Line: 1, Col: 1, EndCol: 2}
}

func yamlErrMsg(err error) string {
	if m := yamlLineRE().FindStringSubmatch(err.Error()); m != nil {
		return "invalid YAML: " + m[2]
	}
	return "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")
}

// eachKey calls fn for every key of a mapping, reporting unknown and
// repeated keys.
func eachKey(f *File, m *yaml.Node, what string, known []string, fn func(k, v *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			f.errorf(pos(k), "test-schema", "key `%s` appears twice in this %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		ok := false
		for _, n := range known {
			if k.Value == n {
				ok = true
			}
		}
		if !ok {
			hint := ""
			if s := suggest.Closest(k.Value, known); s != "" {
				hint = fmt.Sprintf(" (did you mean `%s`?)", s)
			}
			f.errorf(pos(k), "test-unknown-key", "unknown key `%s` in %s%s; known keys: %s", k.Value, what, hint, strings.Join(known, ", "))
			continue
		}
		fn(k, v)
	}
}

// str reads a scalar string.
func str(f *File, v *yaml.Node, what string) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		f.errorf(pos(v), "test-schema", "`%s` must be a string", what)
		return "", false
	}
	return v.Value, true
}

var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// Slug turns a case name into a file name: lower case, runs of other
// characters become one dash.
func Slug(name string) string {
	s := strings.Trim(slugRE().ReplaceAllString(strings.ToLower(name), "-"), "-")
	if s == "" {
		s = "case"
	}
	return s
}

// DefaultCassette is the cassette path of a case that names none:
// cassettes/NAME/CASE-SLUG.jsonl beside the test file.
func DefaultCassette(dir, stem, name string) string {
	return filepath.Join(dir, "cassettes", stem, Slug(name)+".jsonl")
}

func parseCase(f *File, item *yaml.Node, stem string) *Case {
	if item.Kind != yaml.MappingNode {
		f.errorf(pos(item), "test-schema", "a case is a mapping starting with `name:`")
		return nil
	}
	c := &Case{Start: item.Line, Pos: pos(item)}
	named := false
	var cassetteSet bool
	eachKey(f, item, "case", []string{"name", "input", "section", "store", "cassette", "expect", "skip", "pass_rate"}, func(k, v *yaml.Node) {
		switch k.Value {
		case "pass_rate":
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				f.errorf(pos(v), "test-schema", "`pass_rate` is a number greater than 0 and at most 1 (the share of --repeat runs that must pass, e.g. 0.8)")
				return
			}
			r, err := ParsePassRate(v.Value)
			if err != nil {
				f.errorf(pos(v), "test-schema", "`pass_rate`: %v", err)
				return
			}
			c.PassRate, c.PassRatePos = r, pos(v)
		case "name":
			if s, ok := str(f, v, "name"); ok {
				if strings.TrimSpace(s) == "" {
					f.errorf(pos(v), "test-schema", "case `name` is empty: give the case a short unique name")
					return
				}
				c.Name, c.Pos, named = s, pos(v), true
			}
		case "input":
			if s, ok := str(f, v, "input"); ok {
				c.Input = s
			}
		case "section":
			if s, ok := str(f, v, "section"); ok {
				c.Section, c.SectionPos = s, pos(v)
			}
		case "skip":
			switch {
			case v.Kind == yaml.ScalarNode && v.Tag == "!!bool":
				if v.Value == "true" {
					c.Skip = "skipped"
				}
			case v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value != "":
				c.Skip = v.Value
			default:
				f.errorf(pos(v), "test-schema", "`skip` is true or a reason string")
			}
		case "cassette":
			if s, ok := str(f, v, "cassette"); ok {
				if s == "" || filepath.IsAbs(s) {
					f.errorf(pos(v), "test-schema", "`cassette` must be a path relative to the test file")
					return
				}
				c.Cassette, c.CassettePos, cassetteSet = filepath.Join(f.Dir, filepath.FromSlash(s)), pos(v), true
			}
		case "store":
			if v.Kind != yaml.MappingNode {
				f.errorf(pos(v), "test-schema", "`store` maps store paths to their text, e.g. `store: {notes/a.md: \"seed\"}`")
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				pk, pv := v.Content[i], v.Content[i+1]
				if s, ok := str(f, pv, "store: "+pk.Value); ok {
					if err := validStorePath(pk.Value); err != nil {
						f.errorf(pos(pk), "test-schema", "store path %q: %v", pk.Value, err)
						continue
					}
					c.Store = append(c.Store, StoreFile{Path: pk.Value, Text: s})
				}
			}
		case "expect":
			parseExpect(f, c, v)
		}
	})
	if !named {
		f.errorf(pos(item), "test-schema", "case has no `name`: add `name: ...` (unique in the file)")
		return nil
	}
	if !cassetteSet {
		c.Cassette, c.CassettePos = DefaultCassette(f.Dir, stem, c.Name), c.Pos
	}
	return c
}

func parseExpect(f *File, c *Case, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		f.errorf(pos(v), "test-schema", "`expect` is a mapping of %s", strings.Join(expectKeys, ", "))
		return
	}
	eachKey(f, v, "expect", expectKeys, func(k, v *yaml.Node) {
		switch k.Value {
		case "tool_calls":
			parseToolCalls(f, c, v)
		case "order":
			parseOrder(f, c, v)
		case "never":
			c.Expect.Never = parseNames(f, v, "never", "delete_file")
		case "rounds":
			parseRounds(f, c, v)
		case "tokens":
			parseTokens(f, c, v)
		case "models":
			c.Expect.Models = parseNames(f, v, "models", "gpt-4o-mini")
		case "judge":
			parseJudge(f, c, v)
		case "output":
			c.Expect.Output = parseMatcher(f, v, "expect.output", false)
		case "error":
			c.Expect.Error = parseMatcher(f, v, "expect.error", false)
		case "store":
			if v.Kind != yaml.MappingNode {
				f.errorf(pos(v), "test-schema", "`expect.store` maps store paths to matchers, e.g. `notes/a.md: {contains: \"x\"}`")
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				pk, pv := v.Content[i], v.Content[i+1]
				if err := validStorePath(pk.Value); err != nil {
					f.errorf(pos(pk), "test-schema", "store path %q: %v", pk.Value, err)
					continue
				}
				if m := parseMatcher(f, pv, "expect.store: "+pk.Value, true); m != nil {
					c.Expect.Store = append(c.Expect.Store, StoreExpect{Path: pk.Value, Matcher: m})
				}
			}
		case "tools_called", "sections":
			if v.Kind != yaml.SequenceNode {
				f.errorf(pos(v), "test-schema", "`%s` is a list, e.g. `%s: [%s]`", k.Value, k.Value, map[string]string{"tools_called": "search", "sections": `"## Greet"`}[k.Value])
				return
			}
			var out []Named
			for _, it := range v.Content {
				if s, ok := str(f, it, k.Value+" item"); ok {
					out = append(out, Named{Name: s, Pos: pos(it)})
				}
			}
			if k.Value == "sections" {
				c.Expect.Sections = out
			} else {
				c.Expect.ToolsCalled = out
			}
		}
	})
	if c.Expect.Order != "" && len(c.Expect.ToolCalls) == 0 {
		f.errorf(c.Expect.OrderPos, "test-schema", "`order` applies to `tool_calls`, which this case does not list")
	}
	if c.Expect.Judge != nil && c.Expect.Error != nil {
		f.errorf(c.Expect.Judge.Pos, "test-schema", "`expect.judge` and `expect.error` exclude each other: the judge grades the output of a run that succeeds")
	}
	if c.Expect.Output != nil && c.Expect.Error != nil {
		f.errorf(c.Expect.Error.Pos, "test-schema", "`expect.output` and `expect.error` exclude each other: a failing run has no output")
	}
}

var expectKeys = []string{"output", "store", "tools_called", "sections", "error", "tool_calls", "order", "never", "rounds", "tokens", "models", "judge"}

func validStorePath(p string) error { return store.ValidatePath(p) }

// stemOf is NAME for NAME.test.yaml.
func stemOf(path string) string { return strings.TrimSuffix(filepath.Base(path), Suffix) }

// Load reads and parses a test file.
func Load(path string) (*File, error) {
	data, err := fsread.ReadFile(path, fsread.TestFile)
	if err != nil {
		return nil, err
	}
	return Parse(path, data), nil
}

var promptKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^prompt\s*:`) })

// Claims reports whether a *.test.yaml found by a folder walk (or opened
// in the editor) is a prompt test file: its NAME.md exists beside it, or
// it names its prompt with a top-level `prompt:` key. Other tools'
// .test.yaml files are left alone; a file named on the command line is
// always checked.
func Claims(path string, data []byte) bool {
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), stemOf(path)+".md")); err == nil {
		return true
	}
	return promptKeyRE().Match(data)
}

// readPrompt is the default ReadFunc: the one reader for repository files
// (docs/security.md#reads), capped at a prompt's size.
func readPrompt(path string) ([]byte, error) { return fsread.ReadFile(path, fsread.Prompt) }
