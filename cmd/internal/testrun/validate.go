package testrun

import (
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
)

// ReadFunc reads a file; the language server passes one that prefers open
// editor buffers.
type ReadFunc func(path string) ([]byte, error)

// Validate checks the file against its prompt and the file system: the
// prompt exists and parses, every `section` and expected section resolves
// in it, every expected tool alias is one the prompt declares, and every
// cassette exists (a warning: `--record` creates it). It returns the
// parsed prompt, or nil when it cannot be read.
func Validate(f *File, read ReadFunc) *parse.Prompt {
	if read == nil {
		read = readPrompt
	}
	defer f.sortDiags()
	at := f.PromptPos
	if at.Line == 0 {
		at = f.Top
	}
	root := fsread.RepoRoot(f.Dir)
	if err := fsread.Inside(root, f.Prompt, "the prompt under test"); err != nil {
		f.errorf(at, "test-path", "%v", err)
		return nil
	}
	for _, c := range f.Cases {
		if err := fsread.Inside(root, c.Cassette, "cassette"); err != nil {
			f.errorf(c.CassettePos, "test-path", "%v", err)
		}
	}
	content, err := read(f.Prompt)
	if err != nil {
		f.errorf(at, "test-prompt", "cannot read the prompt under test %s: %v (name it with `prompt:` or put %s beside the test file)", f.Prompt, errText(err), filepath.Base(f.Prompt))
		return nil
	}
	if !parse.DeclaresPromptforge(content) {
		f.errorf(at, "test-prompt", "%s is not a PromptForge prompt: its frontmatter does not declare `promptforge: 1`", f.Prompt)
		return nil
	}
	p := parse.Parse(f.Prompt, content)
	if len(p.Errors) > 0 {
		e := p.Errors[0]
		f.errorf(at, "test-prompt", "the prompt under test does not parse: %s:%d: %s (run `forge-lsp check %s`)", f.Prompt, p.File.Line(e.Span.Start), e.Message, f.Prompt)
		return p
	}
	aliases, complete, usesModel := promptFacts(p)
	var fl *flow.Result
	for _, c := range f.Cases {
		if c.Section != "" {
			if sec, err := parse.FindSection(p, c.Section); err != nil {
				f.errorf(c.SectionPos, "test-section", "section: %v", err)
			} else {
				if fl == nil {
					fl = flow.Analyze(program.Of(p))
				}
				if keys := fl.AloneUnset(sec); len(keys) > 0 {
					f.warnf(c.SectionPos, "test-section-alone", "section: %s reads var.%s, which only sections before it on the walk set; run alone it starts from the H1's var (docs/language.md#var), so the read fails: set it in the H1, or test the whole prompt", c.Section, strings.Join(keys, ", var."))
				}
			}
		}
		for _, s := range c.Expect.Sections {
			if _, err := parse.FindSection(p, s.Name); err != nil {
				f.errorf(s.Pos, "test-section", "sections: %v", err)
			}
		}
		validateJudge(f, c, read)
		for _, sl := range c.Expect.roundSections() {
			if _, err := parse.FindSection(p, sl.Name); err != nil {
				f.errorf(sl.Pos, "test-section", "rounds.sections: %v", err)
			}
		}
		if complete {
			for _, t := range c.Expect.aliases() {
				if !aliases[t.n.Name] {
					known := make([]string, 0, len(aliases))
					for a := range aliases {
						known = append(known, a)
					}
					sort.Strings(known)
					list := "none"
					if len(known) > 0 {
						list = strings.Join(known, ", ")
					}
					hint := ""
					if s := suggest.Closest(t.n.Name, known); s != "" {
						hint = fmt.Sprintf("; did you mean %q?", s)
					}
					f.errorf(t.n.Pos, "test-tool", "%s: the prompt declares no tool alias %q (its aliases: %s%s)", t.key, t.n.Name, list, hint)
				}
			}
		}
		if c.Skip == "" && usesModel {
			if _, err := os.Stat(c.Cassette); err != nil && !hasRepeats(c.Cassette, 1) {
				f.warnf(c.CassettePos, "test-cassette", "no cassette at %s: record it with `forge-lsp test --record %s`", filepath.ToSlash(c.Cassette), filepath.ToSlash(f.Path))
			}
		}
	}
	return p
}

func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// promptFacts returns the tool aliases the prompt binds (tools.bind,
// tools.need, tools.add_local), complete=false when some alias is not a
// string literal (so the set may be incomplete), and whether the prompt
// uses models at all (a prompt that does not needs no cassette).
func promptFacts(p *parse.Prompt) (aliases map[string]bool, complete, usesModel bool) {
	prog := program.Build(p)
	out := map[string]bool{}
	complete = true
	for _, c := range prog.Calls {
		if strings.HasPrefix(c.Canonical(), "models.") {
			usesModel = true
		}
		switch c.Canonical() {
		case "tools.bind", "tools.add_local":
			if s, _, ok := prog.StringArg(c, 0); ok {
				out[s] = true
			} else {
				complete = false
			}
		}
	}
	return out, complete, usesModel
}

// String formats a diagnostic as path:line:col: severity: message.
func (d Diag) String(path string) string {
	return fmt.Sprintf("%s:%d:%d: %s: %s [%s]", path, d.Line, d.Col, d.Severity, d.Message, d.Code)
}
