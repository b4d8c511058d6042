package testrun

// What a case's run is watched for: its rounds, tool calls, sections and
// log lines, the transcript shown for a failure, and the run trace kept
// for it (docs/testing.md).

import (
	"errors"
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/run"
)

type divergence struct {
	err     *gateway.Error
	round   int
	infer   bool
	section string
}

// observer records what a run did: sections entered, tools called, the
// first replay divergence, and the events for a transcript (formatted
// only when a case fails, so passing cases pay little).
type observer struct {
	mu       sync.Mutex
	sections []string
	tools    map[string]int
	calls    []*call
	rounds   []round
	// lastRound is the latest model round of each section entry: the
	// round a tool call that follows it belongs to.
	lastRound map[int64]int
	div       *divergence
	events    []any
	tail      string
}

func sectionLabel(name string) string {
	if name == "" {
		return "the H1"
	}
	return name
}

func (o *observer) SectionEnter(ev run.SectionEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ev.Address != "" {
		o.sections = append(o.sections, canonicalHeading(ev.Address))
	}
	o.events = append(o.events, enterEvent(ev))
}

type enterEvent run.SectionEvent

func (o *observer) SectionExit(ev run.SectionEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
}

func (o *observer) ModelRound(ev run.ModelRoundEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ge *gateway.Error
	if ev.Err != nil && o.div == nil && errors.As(ev.Err, &ge) && ge.Kind == gateway.KindReplay {
		o.div = &divergence{err: ge, round: ev.Round, infer: ev.Infer, section: "`" + ev.Section + "`"}
	}
	if ev.Err == nil {
		rd := round{SectionID: ev.SectionID, Section: ev.Section, Model: ev.Model}
		if ev.Usage != nil {
			rd.Usage, rd.In, rd.Out = true, ev.Usage.PromptTokens, ev.Usage.CompletionTokens
		}
		o.rounds = append(o.rounds, rd)
	}
	if !ev.Infer {
		if o.lastRound == nil {
			o.lastRound = map[int64]int{}
		}
		o.lastRound[ev.SectionID] = ev.Round
	}
	o.events = append(o.events, ev)
}

func (o *observer) ToolCall(ev run.ToolCallEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tools == nil {
		o.tools = map[string]int{}
	}
	o.tools[ev.Alias]++
	o.calls = append(o.calls, &call{Index: len(o.calls) + 1, Round: o.lastRound[ev.SectionID], Section: ev.Section, Alias: ev.Alias, Args: ev.Args})
	o.events = append(o.events, ev)
}

func (o *observer) Log(ev run.LogEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
}

// transcript formats the recorded events. The caller holds o.mu.
func (o *observer) transcript() string {
	var b strings.Builder
	for _, e := range o.events {
		switch ev := e.(type) {
		case enterEvent:
			fmt.Fprintf(&b, "enter %s\n", sectionLabel(ev.Address))
		case run.SectionEvent:
			switch {
			case ev.Err != nil:
				fmt.Fprintf(&b, "exit %s: error: %v\n", sectionLabel(ev.Address), ev.Err)
			case ev.Reply != nil:
				fmt.Fprintf(&b, "exit %s: reply %s\n", sectionLabel(ev.Address), show(*ev.Reply))
			default:
				fmt.Fprintf(&b, "exit %s\n", sectionLabel(ev.Address))
			}
		case run.ModelRoundEvent:
			kind := fmt.Sprintf("model round %d", ev.Round)
			if ev.Infer {
				kind = "models.infer"
			}
			fmt.Fprintf(&b, "%s (%s, %s): prompt %s\n", kind, ev.Section, ev.Model, show(ev.Prompt))
			switch {
			case ev.Err != nil:
				fmt.Fprintf(&b, "  error: %v\n", ev.Err)
			case ev.Text != nil:
				fmt.Fprintf(&b, "  reply %s\n", show(*ev.Text))
			default:
				fmt.Fprintf(&b, "  %d tool call(s)\n", ev.ToolCalls)
			}
		case run.ToolCallEvent:
			fmt.Fprintf(&b, "tool %s(%s) -> %s\n", ev.Alias, ev.Args, show(ev.Result))
			if ev.Err != nil {
				fmt.Fprintf(&b, "  error: %v\n", ev.Err)
			}
		case run.LogEvent:
			fmt.Fprintf(&b, "log: %s\n", ev.Message)
		}
	}
	b.WriteString(o.tail)
	return b.String()
}

// writeTrace keeps a failing case's transcript under dir as
// STEM/CASE-SLUG.log and returns its path.
func writeTrace(dir string, r *Result) (string, error) {
	p := filepath.Join(dir, stemOf(r.File.Path), Slug(r.Case.Name)+".log")
	tp := strings.TrimSuffix(p, ".log") + ".trace.jsonl"
	// A link planted in the trace folder must not carry the write
	// elsewhere (docs/security.md#writes).
	for _, q := range []string{p, tp} {
		if err := fsread.Inside(dir, q, "trace"); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "case %q (%s:%d)\n", r.Case.Name, filepath.ToSlash(r.File.Path), r.Line())
	fmt.Fprintf(&b, "prompt %s", filepath.ToSlash(r.File.Prompt))
	if r.Case.Section != "" {
		fmt.Fprintf(&b, ", section %s", r.Case.Section)
	}
	fmt.Fprintf(&b, "\ninput %q\ncassette %s\nruns %d, passed %d\n\n", r.Case.Input, filepath.ToSlash(r.Case.Cassette), r.Runs, r.Passes)
	b.WriteString("failure:\n")
	b.WriteString(r.Message())
	b.WriteString("\n\ntranscript:\n")
	b.WriteString(r.Transcript)
	fmt.Fprintf(&b, "\noutput:\n%s\n", r.Output)
	if len(r.events) > 0 {
		if err := os.WriteFile(tp, r.events, 0o644); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\ntrace: %s\n", filepath.ToSlash(tp))
	}
	return p, os.WriteFile(p, []byte(b.String()), 0o644)
}
