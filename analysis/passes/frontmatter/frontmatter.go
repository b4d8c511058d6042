package frontmatter

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Codes.
const (
	CodeName    = "frontmatter-name"
	CodeVersion = "frontmatter-version"
)

// ValidName reports whether name follows the catalog's prompt-name rule
// ^[a-z][a-z0-9_]{0,47}$. (Checked by hand: compiling the bounded
// repetition costs more than a whole small check.)
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 48 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

var reserved = map[string]bool{"list_prompts": true, "run_prompt": true, "need_prompt": true, "check_run": true}

// Analyzer checks the frontmatter name and version.
var Analyzer = &analysis.Analyzer{
	Name: "frontmatter",
	Doc:  "check the frontmatter name pattern and the promptforge version",
	Codes: []*analysis.Code{
		{Name: CodeName, Severity: analysis.Warning, Summary: "The prompt name does not match ^[a-z][a-z0-9_]{0,47}$ or is reserved, so a prompt catalog refuses it."},
		{Name: CodeVersion, Severity: analysis.Error, Summary: "`promptforge` is missing or not 1, so the engine refuses to run the prompt."},
	},
	Run: run,
}

func run(pass *analysis.Pass) (any, error) {
	fm := pass.Prompt.Frontmatter
	if fm == nil || !fm.Closed {
		return nil, nil // the parser already reported the frontmatter itself
	}
	if f := fm.Field("name"); f != nil && f.Scalar {
		name := f.Value
		switch {
		case reserved[name]:
			pass.Reportf(f.ValueSpan, CodeName, "prompt name %q is reserved by the prompt catalog; choose another name", name)
		case !ValidName(name):
			d := analysis.Diagnostic{Span: f.ValueSpan, Code: CodeName,
				Message: fmt.Sprintf("prompt name %q does not match ^[a-z][a-z0-9_]{0,47}$ (lower-case letter first, then lower-case letters, digits and _), so a prompt catalog refuses it", name)}
			if fixed := normalise(name); fixed != "" && !f.Quoted {
				d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Rename to " + fixed,
					Edits: []analysis.TextEdit{{Span: f.ValueSpan, NewText: fixed}}}}
			}
			pass.Report(d)
		}
	}
	v := fm.Field("promptforge")
	switch {
	case v == nil || v.Null:
		span := source.Span{Start: fm.Span.Start, End: pass.File.LineEnd(1)}
		if v != nil {
			span = v.KeySpan
		}
		d := analysis.Diagnostic{Span: span, Code: CodeVersion,
			Message: "frontmatter has no `promptforge` version, so this is not a PromptForge prompt and the engine refuses to run it; add `promptforge: 1`"}
		if v == nil {
			// Insert before the closing delimiter line.
			closeLine := pass.File.Line(fm.Span.End)
			at := pass.File.LineStart(closeLine)
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Add promptforge: 1",
				Edits: []analysis.TextEdit{{Span: source.Span{Start: at, End: at}, NewText: "promptforge: 1\n"}}, Safe: true}}
		}
		pass.Report(d)
	case fm.Version != nil && *fm.Version != 1:
		d := analysis.Diagnostic{Span: v.ValueSpan, Code: CodeVersion,
			Message: fmt.Sprintf("unsupported promptforge version %d: this engine runs only version 1", *fm.Version),
			SuggestedFixes: []analysis.SuggestedFix{{Message: "Set promptforge: 1",
				Edits: []analysis.TextEdit{{Span: v.ValueSpan, NewText: "1"}}}}}
		if o, ok := api.LookupOld(fmt.Sprintf("promptforge: %d", *fm.Version)); ok {
			// The older guide's examples said 2 for version 1
			// (docs/migration.md): the rewrite keeps the meaning.
			d.Message += "; " + api.OldMessage(o)
			d.SuggestedFixes[0].Safe = true
		}
		pass.Report(d)
	}
	return nil, nil
}

// normalise turns "My-Prompt" into "my_prompt", or returns "" when that
// does not give a valid name.
func normalise(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r == '-' || r == ' ' || r == '.':
			b.WriteByte('_')
		default:
			return ""
		}
	}
	out := b.String()
	if !ValidName(out) || reserved[out] {
		return ""
	}
	return out
}
