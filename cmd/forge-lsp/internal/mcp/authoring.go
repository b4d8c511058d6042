package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/cmd/internal/findings"
	"github.com/forge-lsp/forge-lsp/cmd/internal/testrun"
	"github.com/forge-lsp/forge-lsp/docs"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

type checkPromptIn struct {
	Path string `json:"path,omitempty" jsonschema:"A prompt (NAME.md) or test file (NAME.test.yaml), relative to the prompts folder or to the workspace root, or absolute. With text, the name the text is checked under."`
	Text string `json:"text,omitempty" jsonschema:"The prompt's text, checked instead of the saved file (for an unsaved draft)."`
}

type lookupDocsIn struct {
	Name string `json:"name" jsonschema:"An API name (tools.bind, store.read, Model:infer), a diagnostic code (frontmatter-name) or a frontmatter key (max_tool_iterations)."`
}

type runTestsIn struct {
	Path string `json:"path,omitempty" jsonschema:"A test file (NAME.test.yaml) or a folder of them, relative to the prompts folder or to the workspace root, or absolute; omitted means the whole prompts folder."`
	Run  string `json:"run,omitempty" jsonschema:"A regular expression; only the cases whose name matches run."`
}

func (s *Server) addAuthoringTools() {
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "check_prompt",
		Description: "Checks a PromptForge prompt or test file and returns its findings (errors, warnings, hints with their codes, positions and suggested fixes), the same as `forge-lsp check --format json`. Give a path, a text, or both (the text checked under the path's name). Nothing is run."},
		s.checkPrompt)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "lookup_docs",
		Description: "Returns the documentation of a PromptForge Lua API name (tools.bind, store.read, Model:infer), a diagnostic code (frontmatter-name) or a frontmatter key (max_tool_iterations): signature, where it may be used and what it does; a diagnostic code comes with a bad and a fixed example. An unknown name returns the nearest known names."},
		s.lookupDocs)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "run_tests",
		Description: "Runs the prompt test cases (NAME.test.yaml) under a path offline, replaying their recorded cassettes, and returns each case's status with its mismatches, the same as `forge-lsp test --format json`. No model is called and no workspace tool command runs."},
		s.runTests)
}

// workspacePath resolves a tool's path argument: absolute, or relative
// to the prompts folder, or, as an agent sees paths, relative to the
// workspace root ("prompts/echo.md" when the prompts folder is
// "prompts"). A path that starts with the prompts folder's own path, or
// names a file only the workspace root holds, is the workspace's. The
// caller still confines the result (inWorkspace).
func (s *Server) workspacePath(p string) string {
	cfg := s.config()
	if p == "" {
		return cfg.Prompts
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	p = filepath.FromSlash(p)
	inPrompts := filepath.Join(cfg.Prompts, p)
	if cfg.Workspace == "" {
		return inPrompts
	}
	inRoot := filepath.Join(cfg.Workspace, p)
	if rel, err := filepath.Rel(cfg.Workspace, cfg.Prompts); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		if clean := filepath.Clean(p); strings.HasPrefix(clean, rel+string(filepath.Separator)) || clean == rel {
			if _, err := os.Stat(inPrompts); err != nil {
				return inRoot
			}
		}
	}
	if _, err := os.Stat(inPrompts); err != nil {
		if _, err := os.Stat(inRoot); err == nil {
			return inRoot
		}
	}
	return inPrompts
}

func (s *Server) checkPrompt(ctx context.Context, _ *sdk.CallToolRequest, in checkPromptIn) (*sdk.CallToolResult, any, error) {
	if in.Path == "" && in.Text == "" {
		return nil, nil, invalidParams("check_prompt needs a path, a text, or both")
	}
	name := in.Path
	if name == "" {
		name = "untitled.md"
	}
	path := s.workspacePath(name)
	if err := s.inWorkspace("path", path); err != nil {
		return textError(err.Error() + "; check_prompt checks the files of this workspace only")
	}
	content := []byte(in.Text)
	if in.Text == "" {
		b, err := readPrompt(path)
		if err != nil {
			return textError(fmt.Sprintf("%s %v", path, err))
		}
		content = b
	}
	// The analysis takes no context: a cancelled call answers at once and
	// leaves it to finish (its input is capped) in the background.
	type result struct {
		found []findings.Diagnostic
		err   error
	}
	done := make(chan result, 1)
	go func() {
		found, err := findings.Of(path, content)
		done <- result{found, err}
	}()
	var found []findings.Diagnostic
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case r := <-done:
		if r.err != nil {
			return textError(r.err.Error())
		}
		found = r.found
	}
	out := struct {
		Path     string                `json:"path"`
		Errors   int                   `json:"errors"`
		Warnings int                   `json:"warnings"`
		Findings []findings.Diagnostic `json:"findings"`
	}{Path: path, Findings: found}
	if out.Findings == nil {
		out.Findings = []findings.Diagnostic{}
	}
	for _, d := range found {
		switch d.Severity {
		case "error":
			out.Errors++
		case "warning":
			out.Warnings++
		}
	}
	return structured(out, false)
}

// DocEntry is lookup_docs' answer.
type DocEntry struct {
	// Kind is "api", "code" or "frontmatter".
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Signature is an API entry's; Where the contexts it may be used in.
	Signature string `json:"signature,omitempty"`
	Where     string `json:"where,omitempty"`
	// Severity and Analyzer are a diagnostic code's.
	Severity string `json:"severity,omitempty"`
	Analyzer string `json:"analyzer,omitempty"`
	Summary  string `json:"summary,omitempty"`
	// Doc is the Markdown documentation.
	Doc string `json:"doc"`
}

func (s *Server) lookupDocs(ctx context.Context, _ *sdk.CallToolRequest, in lookupDocsIn) (*sdk.CallToolResult, any, error) {
	name := strings.TrimSpace(strings.Trim(in.Name, "`"))
	if d, ok := LookupDoc(name); ok {
		return structured(d, false)
	}
	near, err := nearestDocNames(ctx, name, 5)
	if err != nil {
		return nil, nil, err
	}
	return textError(fmt.Sprintf("no API name, diagnostic code or frontmatter key %q. Nearest: %s.", name, strings.Join(near, ", ")))
}

// LookupDoc finds name in the API table, the diagnostic codes and the
// frontmatter keys, in that order.
func LookupDoc(name string) (DocEntry, bool) {
	if e, ok := api.Lookup(name); ok {
		return DocEntry{Kind: "api", Name: e.Name, Signature: e.Signature, Where: e.Allowed.String(), Doc: e.Doc}, true
	}
	for _, e := range api.All() {
		for _, syn := range e.Synonyms {
			if syn == name {
				return DocEntry{Kind: "api", Name: e.Name, Signature: e.Signature, Where: e.Allowed.String(), Doc: e.Doc}, true
			}
		}
	}
	for _, c := range checker.Codes() {
		if c.Name == name {
			return DocEntry{Kind: "code", Name: c.Name, Severity: c.Severity.String(), Analyzer: c.Analyzer.Name, Summary: c.Summary, Doc: codeSection(name)}, true
		}
	}
	if row, ok := frontmatterKeys()[name]; ok {
		return DocEntry{Kind: "frontmatter", Name: name, Doc: row}, true
	}
	return DocEntry{}, false
}

// codeSection is the "### `code`" section of docs/codes.md.
func codeSection(code string) string {
	head := "### `" + code + "`"
	i := strings.Index(docs.Codes, head+"\n")
	if i < 0 {
		return ""
	}
	rest := docs.Codes[i+len(head):]
	end := len(rest)
	for _, stop := range []string{"\n### ", "\n## "} {
		if j := strings.Index(rest, stop); j >= 0 && j < end {
			end = j
		}
	}
	return strings.TrimSpace(rest[:end])
}

// frontmatterKeys is the table under "### Frontmatter keys" in
// docs/language.md, each key's answer.
func frontmatterKeys() map[string]string {
	out := map[string]string{}
	for _, k := range docs.FrontmatterKeys() {
		meaning := strings.ReplaceAll(k.Meaning, "](#", "](docs/language.md#")
		out[k.Name] = fmt.Sprintf("Frontmatter key `%s`. Required: %s. Value: %s. %s", k.Name, k.Required, k.Value, meaning)
	}
	return out
}

// nearestDocNames ranks every documented name by edit distance to name;
// a cancelled ctx stops it.
func nearestDocNames(ctx context.Context, name string, n int) ([]string, error) {
	seen := map[string]bool{}
	var all []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	for _, e := range api.All() {
		add(e.Name)
	}
	for _, c := range checker.Codes() {
		add(c.Name)
	}
	for k := range frontmatterKeys() {
		add(k)
	}
	want := strings.ToLower(name)
	dist := make(map[string]int, len(all))
	for _, a := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dist[a] = levenshtein.ComputeDistance(strings.ToLower(a), want)
	}
	sort.Slice(all, func(i, j int) bool {
		if di, dj := dist[all[i]], dist[all[j]]; di != dj {
			return di < dj
		}
		return all[i] < all[j]
	})
	return all[:min(n, len(all))], nil
}

// inWorkspace refuses a path that resolves, links included, outside both
// the workspace and the prompts folder: a tool argument must not make the
// server read, or walk, the rest of the machine.
func (s *Server) inWorkspace(arg, path string) error {
	cfg := s.config()
	err := fsread.Inside(cfg.Workspace, path, arg)
	if err != nil && fsread.Inside(cfg.Prompts, path, arg) == nil {
		return nil
	}
	return err
}

func (s *Server) runTests(ctx context.Context, _ *sdk.CallToolRequest, in runTestsIn) (*sdk.CallToolResult, any, error) {
	path := s.workspacePath(in.Path)
	if err := s.inWorkspace("path", path); err != nil {
		return textError(err.Error() + "; run_tests runs the tests of this workspace only")
	}
	if _, err := os.Stat(path); err != nil {
		return textError(fmt.Sprintf("%s: %v", path, err))
	}
	opts := testrun.Options{}
	if in.Run != "" {
		re, err := regexp.Compile(in.Run)
		if err != nil {
			return nil, nil, invalidParams("run: %v", err)
		}
		opts.Filter = re
	}
	rep, problems := testrun.Report(ctx, []string{path}, opts)
	out := struct {
		testrun.JSONReport
		Problems []string `json:"problems,omitempty"`
	}{rep, problems}
	return structured(out, rep.Failed > 0 || len(problems) > 0)
}
