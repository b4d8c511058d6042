// Package trace records what a run did: a JSON-lines trace file (one event
// a line, the format documented in docs/debugging.md) and a readable
// transcript. Both implement run.Hook, so they see every block and store write
// as well as the Observer events; Multi combines several observers into
// one for a run.
package trace

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
)

// Version is the trace format version, written in the first event.
const Version = 1

// Event is one trace line. Fields that do not apply to an event are
// omitted.
type Event struct {
	// Ev is the event type: run.start, section.enter, section.exit,
	// block, model.round, tool.call, store.write, var.write, log, run.end.
	Ev string `json:"ev"`
	// MS is the time since the run started, in milliseconds.
	MS float64 `json:"ms"`
	// Line and EndLine are the event's 1-based source lines in the prompt.
	Line    int `json:"line,omitempty"`
	EndLine int `json:"endLine,omitempty"`

	Version int    `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
	Input   string `json:"input,omitempty"`

	// SectionID is the entry id (sys.id; 0 for the H1 pass), set on every
	// event but run.start and run.end; Section the heading text.
	SectionID *int64 `json:"sectionId,omitempty"`
	Section   string `json:"section,omitempty"`
	Address   string `json:"address,omitempty"`
	Depth     int    `json:"depth,omitempty"`
	Arm       int    `json:"arm,omitempty"`
	Chain     bool   `json:"chain,omitempty"`

	// Kind is the block kind (lua, prose) of a block event, the store
	// operation of a store.write.
	Kind string `json:"kind,omitempty"`
	// Text is a prose block's substituted text (the user message).
	Text string `json:"text,omitempty"`

	Model        string  `json:"model,omitempty"`
	Round        int     `json:"round,omitempty"`
	Infer        bool    `json:"infer,omitempty"`
	Prompt       string  `json:"prompt,omitempty"`
	Reply        *string `json:"reply,omitempty"`
	FinishReason *string `json:"finishReason,omitempty"`
	ToolCalls    int     `json:"toolCalls,omitempty"`
	// Usage is the model round's token count, when the gateway reported it.
	Usage *Usage `json:"usage,omitempty"`

	Alias     string `json:"alias,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Args      string `json:"args,omitempty"`
	Result    string `json:"result,omitempty"`
	Untrusted bool   `json:"untrusted,omitempty"`

	StorePath string `json:"storePath,omitempty"`
	Bytes     int    `json:"bytes,omitempty"`

	// VarPath is the key a var.write changed; Value its new value as
	// compact JSON (absent when the key was deleted).
	VarPath string  `json:"varPath,omitempty"`
	Value   *string `json:"value,omitempty"`

	Message string `json:"message,omitempty"`
	// DurationMS is the duration of a section entry, model round or tool
	// call, in milliseconds.
	DurationMS *float64 `json:"durationMs,omitempty"`
	// Error is the failure; ErrorKind the run error kind (run.end).
	Error     string `json:"error,omitempty"`
	ErrorKind string `json:"errorKind,omitempty"`
}

// id is a section id as an event carries it.
func id(n int64) *int64 { return &n }

// Usage is a model round's token count as the gateway reported it.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
}

func usageOf(ev run.ModelRoundEvent) *Usage {
	if ev.Usage == nil {
		return nil
	}
	return &Usage{PromptTokens: ev.Usage.PromptTokens, CompletionTokens: ev.Usage.CompletionTokens, TotalTokens: ev.Usage.TotalTokens}
}

// Writer writes a JSON-lines trace. Safe for concurrent use (fanout arms
// report from several goroutines).
type Writer struct {
	mu     sync.Mutex
	enc    *json.Encoder
	err    error
	start  time.Time
	now    func() time.Time
	enters map[int64]time.Time
}

// NewWriter starts a trace of the run of path with input on w.
func NewWriter(w io.Writer, path, input string) *Writer {
	return newWriter(w, path, input, time.Now)
}

func newWriter(w io.Writer, path, input string, now func() time.Time) *Writer {
	t := &Writer{enc: json.NewEncoder(w), now: now, enters: map[int64]time.Time{}}
	t.enc.SetEscapeHTML(false)
	t.start = now()
	t.emit(Event{Ev: "run.start", Version: Version, Path: path, Input: input})
	return t
}

// Err is the first write error, if any; later events are dropped.
func (t *Writer) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func ms(d time.Duration) *float64 {
	v := float64(d.Microseconds()) / 1e3
	return &v
}

func (t *Writer) emit(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.write(e)
}

// write needs t.mu.
func (t *Writer) write(e Event) {
	if t.err != nil {
		return
	}
	e.MS = *ms(t.now().Sub(t.start))
	t.err = t.enc.Encode(e)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// SectionEnter implements run.Observer.
func (t *Writer) SectionEnter(ev run.SectionEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.enters[ev.ID] = t.now()
	t.write(Event{Ev: "section.enter", SectionID: id(ev.ID), Section: ev.Name, Address: ev.Address, Line: ev.Line,
		Depth: ev.Depth, Arm: ev.Index, Chain: ev.Chain})
}

// SectionExit implements run.Observer.
func (t *Writer) SectionExit(ev run.SectionEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := Event{Ev: "section.exit", SectionID: id(ev.ID), Section: ev.Name, Address: ev.Address, Line: ev.Line,
		Depth: ev.Depth, Arm: ev.Index, Chain: ev.Chain, Reply: ev.Reply, Error: errText(ev.Err)}
	if at, ok := t.enters[ev.ID]; ok {
		e.DurationMS = ms(t.now().Sub(at))
		delete(t.enters, ev.ID)
	}
	t.write(e)
}

// ModelRound implements run.Observer.
func (t *Writer) ModelRound(ev run.ModelRoundEvent) {
	t.emit(Event{Ev: "model.round", SectionID: id(ev.SectionID), Section: ev.Section, Line: ev.Line, Model: ev.Model,
		Round: ev.Round, Infer: ev.Infer, Prompt: ev.Prompt, Reply: ev.Text, FinishReason: ev.FinishReason,
		ToolCalls: ev.ToolCalls, Usage: usageOf(ev), DurationMS: ms(ev.Duration), Error: errText(ev.Err)})
}

// ToolCall implements run.Observer.
func (t *Writer) ToolCall(ev run.ToolCallEvent) {
	t.emit(Event{Ev: "tool.call", SectionID: id(ev.SectionID), Section: ev.Section, Line: ev.Line, Alias: ev.Alias,
		Tool: ev.Tool, Args: ev.Args, Result: ev.Result, Untrusted: ev.Untrusted, DurationMS: ms(ev.Duration),
		Error: errText(ev.Err)})
}

// Log implements run.Observer.
func (t *Writer) Log(ev run.LogEvent) {
	t.emit(Event{Ev: "log", SectionID: id(ev.SectionID), Section: ev.Section, Line: ev.Line, Message: ev.Message})
}

// Pause implements run.Hook: it records the block (tool points are
// recorded by ToolCall once the call is done).
func (t *Writer) Pause(p *run.PausePoint) error {
	if p.Kind != run.PointLua && p.Kind != run.PointProse {
		return nil
	}
	t.emit(Event{Ev: "block", Kind: p.Kind.String(), SectionID: id(p.VM.ID), Section: p.VM.Name(), Line: p.Line,
		EndLine: p.EndLine, Text: p.Text})
	return nil
}

// StoreWrite implements run.Hook.
func (t *Writer) StoreWrite(ev run.StoreEvent) {
	t.emit(Event{Ev: "store.write", SectionID: id(ev.SectionID), Section: ev.Section, Kind: ev.Op, StorePath: ev.Path,
		Bytes: ev.Bytes, Line: ev.Line})
}

// VarWrite implements run.VarHook.
func (t *Writer) VarWrite(ev run.VarEvent) {
	e := Event{Ev: "var.write", SectionID: id(ev.SectionID), Section: ev.Section, VarPath: ev.Path, Line: ev.Line}
	if !ev.Deleted {
		v := ev.Value
		e.Value = &v
	}
	t.emit(e)
}

// End writes the run's outcome: the result, or the error with its kind
// and line.
func (t *Writer) End(result string, err error) {
	e := Event{Ev: "run.end"}
	if err != nil {
		var re *run.RunError
		if errors.As(err, &re) {
			e.Error, e.ErrorKind, e.Line = re.Msg, re.Kind.String(), re.Line
		} else {
			e.Error = err.Error()
		}
	} else {
		e.Reply = &result
	}
	t.emit(e)
}

// Multi returns one observer that passes every event to each of obs in
// order (nil entries are skipped). It is a run.Hook: Pause stops at the
// first error. When one of obs is a run.LineHook (a debugger), so is the
// result, and it stops at the lines every such member asks for.
func Multi(obs ...run.Observer) run.Hook {
	var m multi
	lines := false
	for _, o := range obs {
		if o != nil {
			m = append(m, o)
			if _, ok := o.(run.LineHook); ok {
				lines = true
			}
		}
	}
	if lines {
		return lineMulti{m}
	}
	return m
}

// lineMulti is a multi with a run.LineHook among its members.
type lineMulti struct{ multi }

func (m lineMulti) BreakLines(vm *run.VM, c *parse.Chunk) []int {
	var out []int
	for _, o := range m.multi {
		if h, ok := o.(run.LineHook); ok {
			out = append(out, h.BreakLines(vm, c)...)
		}
	}
	if len(out) < 2 {
		return out
	}
	slices.Sort(out)
	return slices.Compact(out)
}

type multi []run.Observer

func (m multi) SectionEnter(ev run.SectionEvent)  { m.each(func(o run.Observer) { o.SectionEnter(ev) }) }
func (m multi) SectionExit(ev run.SectionEvent)   { m.each(func(o run.Observer) { o.SectionExit(ev) }) }
func (m multi) ModelRound(ev run.ModelRoundEvent) { m.each(func(o run.Observer) { o.ModelRound(ev) }) }
func (m multi) ToolCall(ev run.ToolCallEvent)     { m.each(func(o run.Observer) { o.ToolCall(ev) }) }
func (m multi) Log(ev run.LogEvent)               { m.each(func(o run.Observer) { o.Log(ev) }) }

// StreamsText reports whether a member shows answers as they stream
// (run.TextObserver).
func (m multi) StreamsText() bool {
	for _, o := range m {
		if to, ok := o.(run.TextObserver); ok && to.StreamsText() {
			return true
		}
	}
	return false
}

// ModelText passes a piece of streamed text to the members that show it.
func (m multi) ModelText(ev run.ModelTextEvent) {
	for _, o := range m {
		if to, ok := o.(run.TextObserver); ok && to.StreamsText() {
			to.ModelText(ev)
		}
	}
}

// each passes every observer to f, in order.
func (m multi) each(f func(run.Observer)) {
	for _, o := range m {
		f(o)
	}
}

func (m multi) Pause(p *run.PausePoint) error {
	for _, o := range m {
		if h, ok := o.(run.Hook); ok {
			if err := h.Pause(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m multi) VarWrite(ev run.VarEvent) {
	for _, o := range m {
		if h, ok := o.(run.VarHook); ok {
			h.VarWrite(ev)
		}
	}
}

func (m multi) StoreWrite(ev run.StoreEvent) {
	for _, o := range m {
		if h, ok := o.(run.Hook); ok {
			h.StoreWrite(ev)
		}
	}
}
