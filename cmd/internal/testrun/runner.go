package testrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
)

// Mode is how cases reach a model.
type Mode int

const (
	// Replay answers every gateway request from the case's cassette; no
	// network is used (the default).
	Replay Mode = iota
	// Record runs live and writes each case's cassette.
	Record
	// Live runs against the gateway and writes nothing (--repeat).
	Live
)

// Options configure a test run.
type Options struct {
	// Jobs is how many cases run at once; <= 0 means the number of CPUs.
	Jobs int
	// Filter, when set, selects cases by name.
	Filter *regexp.Regexp
	// Shard, when set, runs only that part of the selected cases (Select).
	Shard Shard
	Mode  Mode
	// Repeat runs each case this many times; <= 1 means once. A replay
	// (or a recording) of attempt K uses the case's cassette K
	// (RepeatCassette).
	Repeat int
	// LiveFallback, with Replay and Repeat, runs live a case that lacks
	// its Repeat recorded cassettes (Gateway must be set).
	LiveFallback bool
	// PassRate is the share of the runs a case must pass when it sets no
	// pass_rate of its own; 0 means every run.
	PassRate float64
	// Gateway is the live gateway for Record and Live.
	Gateway gateway.Config
	// GatewayConfig is the gateway file (docs/gateway.md) each live case
	// serves in-process; it wins over Gateway.
	GatewayConfig string
	// Transcripts keeps the transcript of every case, passing ones too
	// (the editor's Test Results show it); otherwise only a failing
	// case's is made.
	Transcripts bool
	// TraceDir, when set, keeps a transcript of every failing case there.
	TraceDir string
	// AllowPrivate lets web_fetch reach non-public addresses.
	AllowPrivate bool
	// LiveTools lets a replay run workspace commands and web_fetch when a
	// cassette holds no recorded result (session.Options.LiveTools);
	// LiveToolsHint says how the user allows it in this host.
	LiveTools     bool
	LiveToolsHint string
	// Timeout is each case run's wall-clock limit; 0 means
	// session.DefaultCaseTimeout (a replay is offline and takes
	// milliseconds, so only a run stuck on something no budget counts
	// reaches it), a negative value none.
	Timeout time.Duration
	// Read reads prompt files (nil: fsread with the prompt cap).
	Read ReadFunc
	// OnResult, when set, is called as each case finishes (one call at a
	// time).
	OnResult func(*Result)
	// Telemetry, when set, exports each case run's span tree over OTLP
	// (docs/observability.md).
	Telemetry *telemetry.Telemetry
}

// Status of a case.
type Status string

// Case statuses.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is the outcome of one case.
type Result struct {
	File   *File
	Case   *Case
	Status Status
	// Stale is set when the run left its cassette (the prompt or its
	// inputs changed since recording); Diff then holds a unified diff of
	// the recorded request against the one sent, when there is one.
	Stale      bool
	Diff       string
	Mismatches []Mismatch
	// Runs and Passes count the attempts (more than one with Repeat);
	// Attempts has one entry per attempt, in order.
	Runs, Passes int
	Attempts     []Attempt
	// PassRate is the share of the runs the case had to pass (1: all).
	PassRate float64
	// Judge is the judge's verdict of the attempt shown (expect.judge).
	Judge    *Verdict
	Duration time.Duration
	// Output is the run's result of the first failing attempt (or the
	// last attempt); Transcript its event log.
	Output     string
	Transcript string
	// Trace is the file the failing case's transcript was written to
	// (--trace-dir); the JSON-lines trace of the run (docs/debugging.md)
	// is beside it, with the extension .trace.jsonl.
	Trace string

	events []byte
}

// Attempt is how one run of a case went.
type Attempt struct {
	Pass, Stale bool
	Duration    time.Duration
	// Rounds counts the model rounds; InputTokens and OutputTokens sum
	// the usage the gateway reported (Usage is false when it reported
	// none).
	Rounds                    int
	InputTokens, OutputTokens int64
	Usage                     bool
	// Judge is the judge's verdict (expect.judge), nil without one.
	Judge *Verdict
}

// Rate is the share of the runs that passed.
func (r *Result) Rate() float64 {
	if r.Runs == 0 {
		return 0
	}
	return float64(r.Passes) / float64(r.Runs)
}

// RepeatCassette is the cassette of attempt k (1-based) of a repeated
// case: CASE.K.jsonl beside CASE.jsonl.
func RepeatCassette(cassette string, k int) string {
	ext := filepath.Ext(cassette)
	return fmt.Sprintf("%s.%d%s", strings.TrimSuffix(cassette, ext), k, ext)
}

// hasRepeats reports whether the n cassettes of a repeated case exist.
func hasRepeats(cassette string, n int) bool {
	for k := 1; k <= n; k++ {
		if _, err := os.Stat(RepeatCassette(cassette, k)); err != nil {
			return false
		}
	}
	return true
}

// Flaky reports whether some but not all attempts passed.
func (r *Result) Flaky() bool { return r.Passes > 0 && r.Passes < r.Runs }

// Message is every mismatch, one per line, then the diff.
func (r *Result) Message() string {
	var b strings.Builder
	for i, m := range r.Mismatches {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Msg)
	}
	if r.Diff != "" {
		b.WriteByte('\n')
		b.WriteString(r.Diff)
	}
	return b.String()
}

// Line is the 1-based line of the case's name in its file.
func (r *Result) Line() int { return r.Case.Pos.Line }

// Summary counts results.
type Summary struct{ Passed, Failed, Skipped int }

// Summarize counts the results.
func Summarize(rs []*Result) Summary {
	var s Summary
	for _, r := range rs {
		switch r.Status {
		case Pass:
			s.Passed++
		case Fail:
			s.Failed++
		case Skip:
			s.Skipped++
		}
	}
	return s
}

// String is the closing line: "N passed, N failed[, N skipped]".
func (s Summary) String() string {
	out := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Skipped > 0 {
		out += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return out
}

type job struct {
	file    *File
	c       *Case
	content []byte
	setup   string
	// cassette, when recording, is held while the case runs: one lock per
	// cassette path.
	cassette *sync.Mutex
	// repeat is the number of attempts when c.Cassette is one of a
	// repeated case's cassettes, else 0.
	repeat int
}

// Run runs the selected cases of files (already parsed and validated;
// files with errors should not be passed) and returns one result per
// selected case, in file and case order.
func Run(ctx context.Context, files []*File, opts Options) []*Result {
	read := opts.Read
	if read == nil {
		read = readPrompt
	}
	var jobs []*job
	cassettes := map[string]*sync.Mutex{}
	var (
		last    *File
		content []byte
		setup   string
	)
	for _, sel := range Select(files, opts.Filter, opts.Shard) {
		if sel.File != last {
			last, content, setup = sel.File, nil, ""
			var err error
			if content, err = read(sel.File.Prompt); err != nil {
				setup = fmt.Sprintf("cannot read the prompt under test: %v", err)
			}
		}
		j := &job{file: sel.File, c: sel.Case, content: content, setup: setup}
		if opts.Mode == Record {
			if cassettes[sel.Case.Cassette] == nil {
				cassettes[sel.Case.Cassette] = &sync.Mutex{}
			}
			j.cassette = cassettes[sel.Case.Cassette]
		}
		jobs = append(jobs, j)
	}
	results := make([]*Result, len(jobs))
	n := opts.Jobs
	if n <= 0 {
		n = runtime.NumCPU()
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	report := func(r *Result) {
		if opts.OnResult != nil {
			mu.Lock()
			opts.OnResult(r)
			mu.Unlock()
		}
	}
	var jmu sync.Mutex
	for range min(n, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				jmu.Lock()
				i := next
				next++
				jmu.Unlock()
				if i >= len(jobs) {
					return
				}
				r := runJob(ctx, jobs[i], opts)
				results[i] = r
				report(r)
			}
		}()
	}
	wg.Wait()
	return results
}

func runJob(ctx context.Context, j *job, opts Options) *Result {
	r := &Result{File: j.file, Case: j.c}
	if j.c.Skip != "" {
		r.Status = Skip
		r.Mismatches = []Mismatch{{Pos: j.c.Pos, Msg: "skipped: " + j.c.Skip}}
		return r
	}
	start := time.Now()
	runs := 1
	if opts.Repeat > 1 {
		runs = opts.Repeat
	}
	r.PassRate = 1
	if opts.PassRate > 0 {
		r.PassRate = opts.PassRate
	}
	if j.c.PassRate > 0 {
		r.PassRate = j.c.PassRate
	}
	aopts := opts
	if runs > 1 && opts.Mode == Replay && opts.LiveFallback && !hasRepeats(j.c.Cassette, runs) {
		aopts.Mode = Live
	}
	var failed *attempt
	var last *attempt
	for k := 1; k <= runs; k++ {
		if ctx.Err() != nil {
			break
		}
		aj := j
		if runs > 1 && aopts.Mode != Live {
			c := *j.c
			c.Cassette = RepeatCassette(j.c.Cassette, k)
			copied := *j
			copied.c, copied.repeat = &c, runs
			aj = &copied
		}
		t0 := time.Now()
		a := runOnce(ctx, aj, aopts)
		r.Runs++
		last = a
		at := Attempt{Pass: len(a.mismatches) == 0, Stale: a.stale, Duration: time.Since(t0), Rounds: a.rounds, InputTokens: a.in, OutputTokens: a.out, Usage: a.usage, Judge: a.verdict}
		r.Attempts = append(r.Attempts, at)
		if at.Pass {
			r.Passes++
		} else if failed == nil {
			failed = a
		}
	}
	r.Duration = time.Since(start)
	show := last
	if failed != nil {
		show = failed
	}
	if show == nil {
		r.Status = Fail
		r.Mismatches = []Mismatch{{Pos: j.c.Pos, Msg: "cancelled before it ran"}}
		return r
	}
	r.Output, r.Transcript, r.events = show.output, show.transcript, show.events
	r.Stale, r.Diff, r.Mismatches = show.stale, show.diff, show.mismatches
	r.Judge = show.verdict
	// A rate below 1 tolerates failing runs; the float comparison allows
	// for 0.8 × 5 not being exactly 4.
	if r.Runs > 0 && float64(r.Passes) >= r.PassRate*float64(r.Runs)-1e-9 {
		r.Status = Pass
		if r.Passes < r.Runs {
			// The failures shown are those of a run the rate tolerated.
			r.Stale, r.Diff = false, ""
			r.Mismatches = nil
		}
	} else {
		r.Status = Fail
		if r.Runs > 1 {
			lo, hi := Wilson(r.Passes, r.Runs)
			msg := fmt.Sprintf("passed %d of %d runs", r.Passes, r.Runs)
			if r.PassRate < 1 {
				msg = fmt.Sprintf("passed %d of %d runs (%s, 95%% interval %s–%s), below pass_rate %s", r.Passes, r.Runs, pct(r.Rate()), pct(lo), pct(hi), pct(r.PassRate))
			}
			r.Mismatches = append([]Mismatch{{Pos: j.c.Pos, Msg: msg}}, r.Mismatches...)
		}
		if opts.TraceDir != "" {
			if p, err := writeTrace(opts.TraceDir, r); err == nil {
				r.Trace = p
			} else {
				r.Mismatches = append(r.Mismatches, Mismatch{Pos: j.c.Pos, Msg: "cannot keep the trace: " + err.Error()})
			}
		}
	}
	return r
}

type attempt struct {
	output, transcript string
	// events is the JSON-lines trace (engine/trace) when traces are kept.
	events     []byte
	stale      bool
	diff       string
	mismatches []Mismatch
	// verdict is the judge's, when the case has one and it answered.
	verdict *Verdict
	// rounds, in, out and usage summarise the model rounds (Attempt).
	rounds  int
	in, out int64
	usage   bool
}

func runOnce(ctx context.Context, j *job, opts Options) *attempt {
	c, f := j.c, j.file
	a := &attempt{}
	fail := func(p Pos, format string, args ...any) {
		a.mismatches = append(a.mismatches, Mismatch{Pos: p, Msg: fmt.Sprintf(format, args...)})
	}
	if j.setup != "" {
		fail(c.Pos, "%s", j.setup)
		return a
	}
	st := store.New()
	for _, sf := range c.Store {
		if err := st.Write(sf.Path, sf.Text); err != nil {
			fail(c.Pos, "store %s: %v", sf.Path, err)
			return a
		}
	}
	obs := &observer{}
	spec := runSpec{TestFile: f.Path, Path: f.Prompt, Source: j.content, Section: c.Section, Input: c.Input, Store: st, Observer: obs}
	var events bytes.Buffer
	if opts.TraceDir != "" {
		// Every attempt is traced; the trace is kept only if it fails.
		spec.Trace = &events
	}
	if j.cassette != nil {
		// Cases sharing a cassette record one at a time: each recording
		// then replaces the file whole, and none fails on the other's
		// temporary file.
		j.cassette.Lock()
		defer j.cassette.Unlock()
	}
	spec.Dir = f.Dir
	hr := execute(ctx, c, spec, opts)
	if opts.TraceDir != "" {
		a.events = events.Bytes()
	}
	if hr.setup != nil {
		var se *session.SetupError
		var pe *session.ParseError
		switch {
		case errors.As(hr.setup, &se) && se.Option == session.OptSection:
			fail(c.SectionPos, "section: %v", se.Err)
		case errors.As(hr.setup, &se) && (se.Option == session.OptReplay || se.Option == session.OptRecord):
			fail(c.CassettePos, "cassette: %v", se.Err)
		case errors.As(hr.setup, &pe):
			fail(c.Pos, "%s: %v", filepath.ToSlash(f.Prompt), pe)
		default:
			fail(c.Pos, "%v", hr.setup)
		}
		return a
	}
	out, runErr, closeErr := hr.output, hr.runErr, hr.closeErr
	a.output = out
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if runErr != nil {
		re := run.AsRunError(runErr)
		obs.tail = "run failed: " + re.Located(filepath.ToSlash(f.Prompt)) + "\n"
	}
	a.summarise(obs)
	defer func() {
		if len(a.mismatches) > 0 || opts.Transcripts {
			a.transcript = obs.transcript()
		}
	}()

	// A replay that stopped before a tool would have run on this machine
	// is not stale: the cassette lacks the tool's result, and the message
	// says how to allow it (docs/security.md#runs).
	if errors.Is(runErr, session.ErrToolNotReplayed) {
		fail(c.Pos, "the run failed: %s", run.AsRunError(runErr).Located(filepath.ToSlash(f.Prompt)))
		return a
	}
	// A replay that left its cassette is stale, whatever else happened.
	if opts.Mode == Replay {
		var ge *gateway.Error
		div := obs.div
		if div == nil && errors.As(runErr, &ge) && ge.Kind == gateway.KindReplay {
			div = &divergence{err: ge}
		}
		if div != nil {
			a.stale = true
			what := "a gateway request"
			if d := div.err.Divergence; d != nil {
				what = fmt.Sprintf("request %d (%s %s)", d.Request, d.Method, d.Endpoint)
			}
			if div.round > 0 {
				what = fmt.Sprintf("model round %d of %s", div.round, div.section)
			}
			if div.infer {
				what = fmt.Sprintf("models.infer call of %s", div.section)
			}
			if d := div.err.Divergence; d != nil && d.Recorded != "" {
				fail(c.Pos, "stale: %s sent a request the cassette does not hold (the prompt or the case changed since recording); re-record with `forge-lsp test --record`", what)
				a.diff = requestDiff(filepath.ToSlash(c.Cassette), d.Recorded, d.Sent)
			} else {
				fail(c.Pos, "stale: %s goes beyond the recording (the run now makes more gateway requests than the cassette holds); re-record with `forge-lsp test --record`", what)
			}
			return a
		}
		if je := hr.judgeErr; je != nil && errors.As(je, &ge) && ge.Kind == gateway.KindReplay {
			a.stale = true
			jp := c.Expect.Judge.Pos
			if d := ge.Divergence; d != nil && d.Recorded != "" {
				fail(jp, "stale: the judge sent a request the cassette does not hold (the rubric, the judge prompt, judge.model or the run's output changed since recording); re-record with `forge-lsp test --record`")
				a.diff = requestDiff(filepath.ToSlash(c.Cassette), d.Recorded, d.Sent)
			} else {
				fail(jp, "stale: the judge's requests go beyond the recording (the cassette was recorded without this judge); re-record with `forge-lsp test --record`")
			}
			return a
		}
		if closeErr != nil && errors.As(closeErr, &ge) && ge.Kind == gateway.KindReplay {
			a.stale = true
			fail(c.Pos, "stale: %s; re-record with `forge-lsp test --record`", ge.Msg)
			return a
		}
	}
	if closeErr != nil && opts.Mode == Record {
		fail(c.CassettePos, "cannot write the cassette: %v", closeErr)
	}

	e := c.Expect
	if runErr != nil && hr.noCassette && session.IsGatewayConfig(runErr) {
		how := "`forge-lsp test --record`"
		if j.repeat > 1 {
			how = fmt.Sprintf("`forge-lsp test --record --repeat %d` (one cassette per run)", j.repeat)
		}
		fail(c.CassettePos, "no cassette at %s and the run needs a model (%s): record one with %s", filepath.ToSlash(c.Cassette), run.AsRunError(runErr).Msg, how)
		return a
	}
	if runErr != nil {
		re := run.AsRunError(runErr)
		if e.Error == nil {
			fail(c.Pos, "the run failed: %s", re.Located(filepath.ToSlash(f.Prompt)))
		} else {
			a.mismatches = append(a.mismatches, e.Error.Check("error", re.Msg, true)...)
		}
	} else {
		if e.Error != nil {
			fail(e.Error.Pos, "error: the run succeeded, but the case expects it to fail; got output %s", show(out))
		}
		if e.Output != nil {
			a.mismatches = append(a.mismatches, e.Output.Check("output", out, true)...)
		}
	}
	for _, se := range e.Store {
		text, rerr := st.Read(se.Path)
		present := rerr == nil
		a.mismatches = append(a.mismatches, se.Matcher.Check("store "+se.Path, text, present)...)
	}
	if len(e.ToolsCalled) > 0 {
		called := obs.tools
		for _, t := range e.ToolsCalled {
			if called[t.Name] == 0 {
				fail(t.Pos, "tools_called: %s was never called (called: %s)", t.Name, countList(called))
			}
		}
	}
	if len(e.Sections) > 0 {
		i := 0
		for _, s := range obs.sections {
			if i < len(e.Sections) && s == canonicalHeading(e.Sections[i].Name) {
				i++
			}
		}
		if i < len(e.Sections) {
			entered := "none"
			if len(obs.sections) > 0 {
				entered = strings.Join(obs.sections, ", ")
			}
			fail(e.Sections[i].Pos, "sections: %s was not entered after %s (entered, in order: %s)", canonicalHeading(e.Sections[i].Name), prevName(e.Sections, i), entered)
		}
	}
	a.mismatches = append(a.mismatches, checkTrajectory(&e, obs)...)
	if j := e.Judge; j != nil && runErr == nil {
		a.verdict = hr.verdict
		switch {
		case errors.Is(hr.judgeErr, errNoJudgeClient):
			fail(c.CassettePos, "no cassette at %s and the judge needs a model: record one with `forge-lsp test --record`", filepath.ToSlash(c.Cassette))
		case hr.judgeErr != nil:
			fail(j.Pos, "judge: %v", hr.judgeErr)
		default:
			v := hr.verdict
			for _, m := range j.Pass.Check("judge: verdict", v.Verdict, true) {
				m.Msg = fmt.Sprintf("%s; the judge (%s) gave the reason: %s", m.Msg, v.Model, show(v.Reason))
				a.mismatches = append(a.mismatches, m)
			}
		}
	}
	return a
}

// summarise fills the attempt's rounds and token counts. The caller
// holds o.mu.
func (a *attempt) summarise(o *observer) {
	a.rounds = len(o.rounds)
	for _, rd := range o.rounds {
		if rd.Usage {
			a.usage = true
			a.in += rd.In
			a.out += rd.Out
		}
	}
}

func prevName(ns []Named, i int) string {
	if i == 0 {
		return "the start"
	}
	return canonicalHeading(ns[i-1].Name)
}

func canonicalHeading(s string) string {
	level, name, err := parse.ParseTarget(s)
	if err != nil {
		return strings.TrimSpace(s)
	}
	return strings.Repeat("#", level) + " " + name
}

func countList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(keys, ", ")
}
