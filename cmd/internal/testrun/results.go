package testrun

// The results file (--results) and the comparison with an earlier one
// (--baseline): docs/testing.md#baselines.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

// ResultsVersion is the version of the results file format.
const ResultsVersion = 1

// ResultsFile is the machine-readable record of one `forge-lsp test` run.
type ResultsFile struct {
	Version int          `json:"version"`
	Tool    string       `json:"tool"`
	Repeat  int          `json:"repeat"`
	Cases   []CaseResult `json:"cases"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
	Skipped int          `json:"skipped"`
}

// CaseResult is one case of a results file. Tokens and rounds are means
// per run; the token means cover the runs whose gateway reported usage
// (Usage false: none did).
type CaseResult struct {
	File         string          `json:"file"`
	Line         int             `json:"line"`
	Name         string          `json:"name"`
	Status       Status          `json:"status"`
	Stale        bool            `json:"stale,omitempty"`
	Runs         int             `json:"runs"`
	Passes       int             `json:"passes"`
	Rate         float64         `json:"rate"`
	Interval     [2]float64      `json:"interval"`
	PassRate     float64         `json:"pass_rate"`
	Rounds       float64         `json:"rounds"`
	InputTokens  float64         `json:"input_tokens"`
	OutputTokens float64         `json:"output_tokens"`
	Usage        bool            `json:"usage"`
	DurationMS   float64         `json:"duration_ms"`
	Messages     []string        `json:"messages,omitempty"`
	Attempts     []AttemptResult `json:"attempts"`
}

// AttemptResult is one run of a case.
type AttemptResult struct {
	Pass         bool    `json:"pass"`
	Stale        bool    `json:"stale,omitempty"`
	DurationMS   float64 `json:"duration_ms"`
	Rounds       int     `json:"rounds"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Usage        bool    `json:"usage"`
	// Judge is the judge's verdict of this run (expect.judge).
	Judge *JSONVerdict `json:"judge,omitempty"`
}

func ms(d interface{ Microseconds() int64 }) float64 { return float64(d.Microseconds()) / 1000 }

// ToResults converts results to the results file.
func ToResults(rs []*Result, repeat int) ResultsFile {
	if repeat < 1 {
		repeat = 1
	}
	out := ResultsFile{Version: ResultsVersion, Tool: "forge-lsp test", Repeat: repeat, Cases: []CaseResult{}}
	for _, r := range rs {
		cr := CaseResult{File: repoPath(r.File.Path), Line: r.Line(), Name: r.Case.Name, Status: r.Status, Stale: r.Stale,
			Runs: r.Runs, Passes: r.Passes, PassRate: r.PassRate, DurationMS: ms(r.Duration), Attempts: []AttemptResult{}}
		if r.Runs > 0 {
			cr.Rate = r.Rate()
			lo, hi := Wilson(r.Passes, r.Runs)
			cr.Interval = [2]float64{round4(lo), round4(hi)}
		}
		used := 0
		for _, a := range r.Attempts {
			cr.Attempts = append(cr.Attempts, AttemptResult{Pass: a.Pass, Stale: a.Stale, DurationMS: ms(a.Duration), Rounds: a.Rounds, InputTokens: a.InputTokens, OutputTokens: a.OutputTokens, Usage: a.Usage, Judge: jsonVerdict(a.Judge)})
			cr.Rounds += float64(a.Rounds)
			if a.Usage {
				used++
				cr.InputTokens += float64(a.InputTokens)
				cr.OutputTokens += float64(a.OutputTokens)
			}
		}
		if n := len(r.Attempts); n > 0 {
			cr.Rounds /= float64(n)
		}
		if used > 0 {
			cr.Usage = true
			cr.InputTokens /= float64(used)
			cr.OutputTokens /= float64(used)
		}
		if r.Status != Pass {
			for _, m := range r.Mismatches {
				cr.Messages = append(cr.Messages, m.Msg)
			}
		}
		out.Cases = append(out.Cases, cr)
	}
	s := Summarize(rs)
	out.Passed, out.Failed, out.Skipped = s.Passed, s.Failed, s.Skipped
	return out
}

// repoPath is a test file's path relative to its repository's root (the
// folder holding .git), so that results compare across working folders
// and machines; the path as given when it cannot be made relative.
func repoPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	rel, err := filepath.Rel(fsread.RepoRoot(filepath.Dir(abs)), abs)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// WriteResults writes the results file.
func WriteResults(w io.Writer, rs []*Result, repeat int) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ToResults(rs, repeat))
}

// ReadResults reads a results file written by WriteResults.
func ReadResults(data []byte) (*ResultsFile, error) {
	var rf ResultsFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return nil, fmt.Errorf("not a results file (written by `forge-lsp test --results FILE`): %v", err)
	}
	if rf.Version != ResultsVersion || rf.Tool != "forge-lsp test" {
		return nil, fmt.Errorf("not a results file of this version (want version %d written by `forge-lsp test --results FILE`, got version %d)", ResultsVersion, rf.Version)
	}
	return &rf, nil
}

// Change kinds of a comparison.
const (
	Regression  = "regression"
	Fix         = "fix"
	RateDrop    = "rate drop"
	TokenChange = "tokens"
	Added       = "new"
	Removed     = "gone"
)

// TokenThreshold is the relative change in a case's mean tokens per run
// that a comparison reports.
const TokenThreshold = 0.10

// Change is one difference between a baseline and this run.
type Change struct {
	Kind       string
	File, Name string
	Line       int
	// Before and Now describe the case in the baseline and now.
	Before, Now string
	// Detail is the first failure message now (regressions).
	Detail string
}

// Comparison is the difference between a baseline and this run.
type Comparison struct {
	Baseline string
	Compared int
	Changes  []Change
}

// Count returns how many changes are of kind.
func (c *Comparison) Count(kind string) int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Kind == kind {
			n++
		}
	}
	return n
}

// Worse reports whether the run regressed against the baseline: a case
// that passed fails now, or a pass rate fell below the baseline's
// interval.
func (c *Comparison) Worse() bool { return c.Count(Regression)+c.Count(RateDrop) > 0 }

func caseKey(file, name string) string { return file + "\x00" + name }

func rateText(c CaseResult) string {
	if c.Runs <= 1 {
		return string(c.Status)
	}
	return fmt.Sprintf("%s (%d/%d, 95%% interval %s–%s)", pct(c.Rate), c.Passes, c.Runs, pct(c.Interval[0]), pct(c.Interval[1]))
}

// Compare compares this run's results with a baseline's. Cases are
// matched by file and name; skipped cases on either side are not
// compared.
func Compare(base, now *ResultsFile) *Comparison {
	cmp := &Comparison{}
	before := map[string]CaseResult{}
	for _, c := range base.Cases {
		before[caseKey(c.File, c.Name)] = c
	}
	seen := map[string]bool{}
	for _, n := range now.Cases {
		k := caseKey(n.File, n.Name)
		seen[k] = true
		b, ok := before[k]
		ch := Change{File: n.File, Name: n.Name, Line: n.Line}
		if !ok {
			ch.Kind, ch.Now = Added, string(n.Status)
			cmp.Changes = append(cmp.Changes, ch)
			continue
		}
		if b.Status == Skip || n.Status == Skip {
			continue
		}
		cmp.Compared++
		ch.Before, ch.Now = rateText(b), rateText(n)
		switch {
		case b.Status == Pass && n.Status == Fail:
			ch.Kind = Regression
			if len(n.Messages) > 0 {
				ch.Detail = n.Messages[0]
			}
			cmp.Changes = append(cmp.Changes, ch)
		case b.Status == Fail && n.Status == Pass:
			ch.Kind = Fix
			cmp.Changes = append(cmp.Changes, ch)
		case n.Runs > 0 && b.Runs > 0 && n.Rate < b.Interval[0]-1e-9:
			// The rate fell below what the baseline's runs make
			// plausible (its 95% interval's lower end).
			ch.Kind = RateDrop
			cmp.Changes = append(cmp.Changes, ch)
		}
		if b.Usage && n.Usage {
			bt, nt := b.InputTokens+b.OutputTokens, n.InputTokens+n.OutputTokens
			if bt > 0 && math.Abs(nt-bt)/bt > TokenThreshold {
				cmp.Changes = append(cmp.Changes, Change{Kind: TokenChange, File: n.File, Name: n.Name, Line: n.Line,
					Before: tokenText(b), Now: tokenText(n), Detail: fmt.Sprintf("%+.0f%%", 100*(nt-bt)/bt)})
			}
		}
	}
	for _, b := range base.Cases {
		if !seen[caseKey(b.File, b.Name)] {
			cmp.Changes = append(cmp.Changes, Change{Kind: Removed, File: b.File, Name: b.Name, Line: b.Line, Before: string(b.Status)})
		}
	}
	order := map[string]int{Regression: 0, RateDrop: 1, TokenChange: 2, Fix: 3, Added: 4, Removed: 5}
	sort.SliceStable(cmp.Changes, func(i, j int) bool { return order[cmp.Changes[i].Kind] < order[cmp.Changes[j].Kind] })
	return cmp
}

func tokenText(c CaseResult) string {
	return fmt.Sprintf("%s in + %s out", num(c.InputTokens), num(c.OutputTokens))
}

func num(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Headline is the comparison's one-line summary.
func (c *Comparison) Headline() string {
	if len(c.Changes) == 0 {
		return fmt.Sprintf("baseline %s: no changes (%s compared)", c.Baseline, plural(c.Compared, "case", "cases"))
	}
	var parts []string
	for _, k := range []struct{ kind, one, many string }{
		{Regression, "regression", "regressions"}, {RateDrop, "rate drop", "rate drops"}, {TokenChange, "token change", "token changes"},
		{Fix, "fix", "fixes"}, {Added, "new case", "new cases"}, {Removed, "case gone", "cases gone"},
	} {
		if n := c.Count(k.kind); n > 0 {
			parts = append(parts, plural(n, k.one, k.many))
		}
	}
	return fmt.Sprintf("baseline %s: %s", c.Baseline, strings.Join(parts, ", "))
}

// WriteComparison prints the comparison: a headline, then one line per
// change.
func WriteComparison(w io.Writer, c *Comparison) {
	fmt.Fprintln(w, c.Headline())
	for _, ch := range c.Changes {
		where := fmt.Sprintf("%s:%d: %q", ch.File, ch.Line, ch.Name)
		switch ch.Kind {
		case Regression:
			fmt.Fprintf(w, "  REGRESSION %s: passed before, fails now", where)
			if ch.Detail != "" {
				fmt.Fprintf(w, ": %s", firstLine(ch.Detail))
			}
			fmt.Fprintln(w)
		case Fix:
			fmt.Fprintf(w, "  fixed %s: failed before, passes now\n", where)
		case RateDrop:
			fmt.Fprintf(w, "  RATE DROP %s: %s before, %s now (below the baseline's interval)\n", where, ch.Before, ch.Now)
		case TokenChange:
			fmt.Fprintf(w, "  tokens %s: %s per run, %s before, %s now\n", where, ch.Detail, ch.Before, ch.Now)
		case Added:
			fmt.Fprintf(w, "  new %s: not in the baseline (%s now)\n", where, ch.Now)
		case Removed:
			fmt.Fprintf(w, "  gone %s: in the baseline (%s), not run now\n", where, ch.Before)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// WriteSummary writes the run (and the comparison, when there is one) as
// Markdown for a CI job summary ($GITHUB_STEP_SUMMARY).
func WriteSummary(w io.Writer, rs []*Result, cmp *Comparison) error {
	var b strings.Builder
	s := Summarize(rs)
	fmt.Fprintf(&b, "### forge-lsp test\n\n**%s**\n\n", s.String())
	var failing []*Result
	for _, r := range rs {
		if r.Status == Fail {
			failing = append(failing, r)
		}
	}
	if len(failing) > 0 {
		b.WriteString("| failing case | what differed |\n| --- | --- |\n")
		for _, r := range failing {
			msg := ""
			if len(r.Mismatches) > 0 {
				msg = firstLine(r.Mismatches[0].Msg)
			}
			fmt.Fprintf(&b, "| `%s:%d` %s | %s |\n", mdCell(filepath.ToSlash(r.File.Path)), r.Line(), mdCell(r.Case.Name), mdCell(msg))
		}
		b.WriteString("\n")
	}
	if cmp != nil {
		fmt.Fprintf(&b, "#### Against the baseline\n\n%s\n\n", mdCell(cmp.Headline()))
		if len(cmp.Changes) > 0 {
			b.WriteString("| change | case | before | now |\n| --- | --- | --- | --- |\n")
			for _, ch := range cmp.Changes {
				kind := ch.Kind
				switch ch.Kind {
				case Regression, RateDrop:
					kind = "❌ " + kind
				case Fix:
					kind = "✅ " + kind
				case TokenChange:
					kind = "⚠️ tokens " + ch.Detail
				}
				now := ch.Now
				if ch.Kind == Regression && ch.Detail != "" {
					now += ": " + firstLine(ch.Detail)
				}
				fmt.Fprintf(&b, "| %s | `%s:%d` %s | %s | %s |\n", kind, mdCell(ch.File), ch.Line, mdCell(ch.Name), mdCell(ch.Before), mdCell(now))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	s = strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;").Replace(s)
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:297], "") + "…"
	}
	return s
}
