package trace

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/run"
)

// Transcript writes a readable account of a run as it happens (what
// `forge-lsp run --verbose` prints on stderr): sections entered and left,
// blocks, model rounds, tool calls, store writes and log lines, each with
// its prompt line. Long texts are cut to one line.
type Transcript struct {
	mu     sync.Mutex
	w      io.Writer
	path   string
	enters map[int64]time.Time
}

// NewTranscript writes the transcript of a run of path to w.
func NewTranscript(w io.Writer, path string) *Transcript {
	return &Transcript{w: w, path: path, enters: map[int64]time.Time{}}
}

// maxText is how much of a text a transcript line shows.
const maxText = 120

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxText {
		return string(r[:maxText]) + "…"
	}
	return s
}

func (t *Transcript) printf(line int, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	loc := t.path
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", t.path, line)
	}
	fmt.Fprintf(t.w, "%s: %s\n", loc, fmt.Sprintf(format, args...))
}

func heading(ev run.SectionEvent) string {
	s := ev.Address
	if s == "" {
		s = "# " + ev.Name
	}
	if ev.Index > 0 {
		s += fmt.Sprintf(" [arm %d]", ev.Index)
	}
	return s
}

func dur(d time.Duration) string { return d.Round(time.Millisecond / 10).String() }

// SectionEnter implements run.Observer.
func (t *Transcript) SectionEnter(ev run.SectionEvent) {
	t.mu.Lock()
	t.enters[ev.ID] = time.Now()
	t.mu.Unlock()
	t.printf(ev.Line, "enter %s", heading(ev))
}

// SectionExit implements run.Observer.
func (t *Transcript) SectionExit(ev run.SectionEvent) {
	t.mu.Lock()
	d := time.Since(t.enters[ev.ID])
	delete(t.enters, ev.ID)
	t.mu.Unlock()
	switch {
	case ev.Err != nil:
		t.printf(ev.Line, "leave %s after %s: error: %s", heading(ev), dur(d), short(ev.Err.Error()))
	case ev.Reply != nil:
		t.printf(ev.Line, "leave %s after %s: reply %q", heading(ev), dur(d), short(*ev.Reply))
	default:
		t.printf(ev.Line, "leave %s after %s", heading(ev), dur(d))
	}
}

// ModelRound implements run.Observer.
func (t *Transcript) ModelRound(ev run.ModelRoundEvent) {
	what := "model round"
	if ev.Infer {
		what = "models.infer"
	}
	took := dur(ev.Duration)
	if u := ev.Usage; u != nil {
		took += fmt.Sprintf(", %d+%d tokens", u.PromptTokens, u.CompletionTokens)
	}
	switch {
	case ev.Err != nil:
		t.printf(ev.Line, "%s %d with %s failed after %s: %s", what, ev.Round, ev.Model, took, short(ev.Err.Error()))
	case ev.Text != nil:
		t.printf(ev.Line, "%s %d with %s (%s): reply %q", what, ev.Round, ev.Model, took, short(*ev.Text))
	default:
		t.printf(ev.Line, "%s %d with %s (%s): %d tool call(s)", what, ev.Round, ev.Model, took, ev.ToolCalls)
	}
}

// ToolCall implements run.Observer.
func (t *Transcript) ToolCall(ev run.ToolCallEvent) {
	if ev.Err != nil {
		t.printf(ev.Line, "tool %s(%s) failed after %s: %s", ev.Alias, short(ev.Args), dur(ev.Duration), short(ev.Err.Error()))
		return
	}
	t.printf(ev.Line, "tool %s(%s) → %q (%s)", ev.Alias, short(ev.Args), short(ev.Result), dur(ev.Duration))
}

// Log implements run.Observer.
func (t *Transcript) Log(ev run.LogEvent) { t.printf(ev.Line, "log: %s", ev.Message) }

// Pause implements run.Hook.
func (t *Transcript) Pause(p *run.PausePoint) error {
	switch p.Kind {
	case run.PointLua:
		t.printf(p.Line, "lua block (lines %d-%d)", p.Line, p.EndLine)
	case run.PointProse:
		t.printf(p.Line, "prose block: sending %q", short(p.Text))
	}
	return nil
}

// StoreWrite implements run.Hook.
func (t *Transcript) StoreWrite(ev run.StoreEvent) {
	t.printf(ev.Line, "store %s %s (%d bytes)", ev.Op, ev.Path, ev.Bytes)
}
