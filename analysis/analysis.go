// Package analysis defines the interface between PromptForge checks and the
// programs that run them, after golang.org/x/tools/go/analysis: an Analyzer
// is a value naming its documentation, the analyzers it needs and a Run
// function; a Pass is the only contract between an analyzer and the driver;
// a Diagnostic is a coded finding with optional quick fixes. The package
// knows nothing about LSP or the command line: both the `forge-lsp check`
// command and the language server call the one driver, Run (usually via
// analysis/checker.Check), on the engine's own parse tree.
package analysis

import (
	"fmt"
	"reflect"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// Severity orders diagnostics from most to least serious; the zero value
// means "use the code's default".
type Severity int

// Severities, matching LSP's DiagnosticSeverity numbering.
const (
	SeverityDefault Severity = iota
	Error
	Warning
	Info
	Hint
	// Off disables a code (only meaningful in configuration).
	Off
)

var severityNames = [...]string{"default", "error", "warning", "info", "hint", "off"}

// String returns the lower-case name ("error", "warning", ...).
func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity parses a name written by String.
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if n == name && i != 0 {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want error, warning, info, hint or off)", name)
}

// Code documents one diagnostic code an analyzer may report.
type Code struct {
	// Name is the stable code, e.g. "alias-syntax".
	Name string
	// Severity is the default severity.
	Severity Severity
	// Summary is one sentence for `forge-lsp check --list-codes`.
	Summary string
}

// Analyzer describes one check: its name, documentation, the codes it
// reports, the analyzers whose results it uses, and its logic.
type Analyzer struct {
	// Name is a unique identifier (lower case, digits, dashes).
	Name string
	// Doc is the documentation; the first line is a summary.
	Doc string
	// Codes lists every code Run may report; reporting any other code is
	// a bug that the driver turns into an internal diagnostic.
	Codes []*Code
	// Requires are analyzers that must run first; their results are in
	// Pass.ResultOf.
	Requires []*Analyzer
	// Run applies the analyzer to one prompt. Its result, which must be of
	// ResultType, is made available to dependent analyzers.
	Run func(*Pass) (any, error)
	// ResultType is the type of Run's result (nil when it has none).
	ResultType reflect.Type
}

// String returns the analyzer's name.
func (a *Analyzer) String() string { return a.Name }

// Pass is one application of an analyzer to one prompt.
type Pass struct {
	Analyzer *Analyzer
	// Prompt is the engine's parse of the file; File its text.
	Prompt *parse.Prompt
	File   *source.File
	// ResultOf holds the results of the analyzers in Analyzer.Requires.
	ResultOf map[*Analyzer]any
	// Config is the workspace configuration the driver runs with (nil
	// means defaults).
	Config *Config
	// Catalog returns the tool catalog a run of the prompt would see (the
	// built-ins and the workspace tools file): Config.Catalog when the
	// host resolved it, else the driver loads it once per Run. A pass
	// reads its inputs here and does no I/O of its own.
	Catalog func() *toolrule.Catalog
	// Report records a diagnostic. A zero Severity takes the code's
	// default.
	Report func(Diagnostic)
}

// Reportf reports a diagnostic with a formatted message.
func (p *Pass) Reportf(span source.Span, code, format string, args ...any) {
	p.Report(Diagnostic{Span: span, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Diagnostic is one finding. Spans are absolute byte offsets into the file
// (engine/source converts them to lines and UTF-16 columns at the edges).
type Diagnostic struct {
	Span     source.Span
	Code     string
	Severity Severity
	Message  string
	// Analyzer is the name of the analyzer that reported it (set by the
	// driver).
	Analyzer string
	// SuggestedFixes are alternative fixes; the user picks at most one.
	SuggestedFixes []SuggestedFix
	// Related points at other places that explain the finding (the first
	// declaration of a duplicate, the other near-duplicate tool).
	Related []RelatedInformation
}

// SuggestedFix is one fix: a title and non-overlapping edits that together
// apply it.
type SuggestedFix struct {
	Message string
	Edits   []TextEdit
	// Safe marks a fix that keeps the program's meaning and needs no
	// judgement (not a did-you-mean guess); `check --fix` applies only
	// these.
	Safe bool
}

// TextEdit replaces the bytes in Span with NewText (an empty span inserts).
type TextEdit struct {
	Span    source.Span
	NewText string
}

// RelatedInformation is a secondary location of a diagnostic.
type RelatedInformation struct {
	Span    source.Span
	Message string
}
