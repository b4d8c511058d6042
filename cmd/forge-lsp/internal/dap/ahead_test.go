package dap

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// logLoop logs on every turn of a loop with a statement at line 12.
const logLoop = "---\nname: l\ndescription: a loop\npromptforge: 1\n---\n\n" +
	"# L\n\n" + // 7
	"```lua\n" + // 9
	"local acc = 0\n" + // 10
	"for i = 1, 6 do\n" + // 11
	"  acc = acc + i\n" + // 12
	"  log(\"at \" .. i)\n" + // 13
	"end\n" +
	"return tostring(acc)\n" +
	"```\n"

// aheadLog records what became of the runs started ahead of step backs.
type aheadLog struct {
	mu    sync.Mutex
	heard []string
	ready chan struct{}
	// news is signalled after each thing heard.
	news chan struct{}
}

func newAheadLog() *aheadLog {
	return &aheadLog{ready: make(chan struct{}, 64), news: make(chan struct{}, 1)}
}

func (l *aheadLog) hear(what string) {
	l.mu.Lock()
	l.heard = append(l.heard, what)
	l.mu.Unlock()
	if what == "ready" {
		l.ready <- struct{}{}
	}
	select {
	case l.news <- struct{}{}:
	default:
	}
}

// waitCount waits until what was heard n times, and returns how often it
// was by then.
func (l *aheadLog) waitCount(t *testing.T, what string, n int) int {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if c := l.count(what); c >= n {
			return c
		}
		select {
		case <-l.news:
		case <-deadline:
			t.Fatalf("heard %q %d times, waiting for %d: %v", what, l.count(what), n, l.heard)
		}
	}
}

func (l *aheadLog) count(what string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, h := range l.heard {
		if h == what {
			n++
		}
	}
	return n
}

// waitReady waits until a run ahead stands at its stop.
func (l *aheadLog) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-l.ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the run ahead never reached its stop")
	}
}

// logged counts the console lines "at N" the client has seen so far.
func (c *client) logged() int {
	n := 0
	for _, m := range c.events {
		if o, ok := m.(*godap.OutputEvent); ok && strings.HasPrefix(o.Body.Output, "at ") {
			n++
		}
	}
	return n
}

// TestStepBackRunsAhead: after the first step back, each step back is
// answered by the run started ahead of it, with the same stops and scopes
// as going forward, the same console output as a re-run then, and the
// traces kept per run; a run ahead that is not used shows nothing.
func TestStepBackRunsAhead(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "l.md")
	writeFile(t, prog, logLoop)
	log := newAheadLog()
	c := start(t, Options{ahead: log.hear})
	trace := filepath.Join(dir, "t.jsonl")
	c.launch(LaunchArgs{Program: prog, Trace: trace}, []int{12}, nil)
	type stop struct{ i, acc string }
	at := func(reason string) stop {
		t.Helper()
		_, f := c.at(reason, 12)
		l := c.scope(f.Id, "Locals")
		return stop{l["i"].Value, l["acc"].Value}
	}
	var forward []stop
	forward = append(forward, at("breakpoint"))
	for k := 1; k < 6; k++ {
		c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
		forward = append(forward, at("breakpoint"))
	}
	for k := 4; k >= 0; k-- {
		c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
		if got := at("step"); got != forward[k] {
			t.Fatalf("step back to stop %d: %+v, want %+v", k+1, got, forward[k])
		}
		// The runs for the next aheadRuns step backs start: the first
		// step back's re-run starts them all, each adopted one the one
		// after the last (once the run it replaced has ended).
		if n, want := log.waitCount(t, "started", aheadRuns+4-k), aheadRuns+4-k; n != want {
			t.Errorf("at stop %d: %d runs ahead started, want %d: %v", k+1, n, want, log.heard)
		}
	}
	if n := log.count("adopted"); n != 4 {
		t.Errorf("%d step backs were answered by the run ahead, want 4 (all but the first): %v", n, log.heard)
	}
	// Going forward: 5 lines; re-runs to stops 5..1: 4+3+2+1+0.
	if n := c.logged(); n != 15 {
		t.Errorf("console lines: %d, want 15 (each run's once)", n)
	}

	// A run ahead that stands ready but is not used says nothing.
	for k := 0; k < 3; k++ {
		c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
		at("breakpoint") // stop 4 at the end: +3 lines
	}
	c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread}) // re-run to 3: +2
	at("step")
	log.waitReady(t) // the run ahead to stop 2 has held "at 1"
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	at("breakpoint") // stop 4: +1
	if n := c.logged(); n != 15+3+2+1 {
		t.Errorf("console lines: %d, want %d: the unused run ahead leaked its output", n, 15+3+2+1)
	}
	if log.count("dropped") == 0 {
		t.Error("continuing did not drop the run ahead")
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	at("breakpoint")
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	at("breakpoint")
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "21\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
	// Runs: the launch, 6 step backs. Each re-run keeps the trace before
	// it, written in full once the session ends; no run ahead that was
	// dropped wrote one.
	c.disconnect()
	for n := 1; n <= 6; n++ {
		if _, err := os.Stat(keptTrace(trace, n)); err != nil {
			t.Errorf("trace of run %d: %v", n, err)
		}
	}
	if _, err := os.Stat(keptTrace(trace, 7)); err == nil {
		t.Error("a trace for a run that never showed")
	}
	b, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(b), "at 6") {
		t.Errorf("the last run's trace: %v %.200s", err, b)
	}
	b, err = os.ReadFile(keptTrace(trace, 3))
	if err != nil || !strings.Contains(string(b), "at 3") || strings.Contains(string(b), "at 4") {
		t.Errorf("an adopted run's trace (run 3 stopped at stop 4): %v %.300s", err, b)
	}
}

// TestStepBackAheadDroppedOnChange: a run ahead is not used once the
// prompt's text or the breakpoints changed; the step back re-runs the new
// text.
func TestStepBackAheadDroppedOnChange(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "l.md")
	writeFile(t, prog, logLoop)
	log := newAheadLog()
	c := start(t, Options{ahead: log.hear})
	c.launch(LaunchArgs{Program: prog}, []int{12}, nil)
	c.at("breakpoint", 12)
	for k := 0; k < 4; k++ {
		c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
		c.at("breakpoint", 12)
	}
	c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	c.at("step", 12)
	log.waitReady(t)
	writeFile(t, prog, strings.Replace(logLoop, `log("at " .. i)`, `log("now " .. i)`, 1))
	_, out := c.resumeToStop("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	if !strings.Contains(out, "now 1") || strings.Contains(out, "at 1") {
		t.Errorf("the step back did not re-run the new text: %q", out)
	}
	if log.count("adopted") != 0 {
		t.Errorf("a run ahead of a changed file was used: %v", log.heard)
	}
	log.waitReady(t)
	c.call("setBreakpoints", godap.SetBreakpointsArguments{Source: godap.Source{Path: prog}, Breakpoints: []godap.SourceBreakpoint{{Line: 12}, {Line: 13}}})
	c.call("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	c.at("step", 12)
	if n := log.count("adopted"); n != 0 {
		t.Errorf("a run ahead started with other breakpoints was used: %v", log.heard)
	}
	if d := log.count("dropped"); d < 2 {
		t.Errorf("dropped %d runs ahead, want 2: %v", d, log.heard)
	}
}

// TestStepBackRereadsAChangedPrompt: a prompt saved long before is not
// read again at every re-run (readPrompt), but a new save of it, even to
// the same size, is what the next step back runs.
func TestStepBackRereadsAChangedPrompt(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "l.md")
	saved := func(text string, at time.Time) {
		t.Helper()
		writeFile(t, prog, text)
		if err := os.Chtimes(prog, at, at); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	saved(logLoop, t0)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog}, []int{12}, nil)
	c.at("breakpoint", 12)
	for k := 0; k < 3; k++ {
		c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
		c.at("breakpoint", 12)
	}
	_, out := c.resumeToStop("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	if !strings.Contains(out, "at 1") {
		t.Errorf("the step back did not re-run the prompt: %q", out)
	}
	saved(strings.Replace(logLoop, `log("at " .. i)`, `log("AT " .. i)`, 1), t0.Add(time.Minute))
	_, out = c.resumeToStop("stepBack", godap.StepBackArguments{ThreadId: mainThread})
	if !strings.Contains(out, "AT 1") || strings.Contains(out, "at 1") {
		t.Errorf("the step back did not re-run the saved text: %q", out)
	}
}
