package run

import (
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// Observer receives run events. Calls may come from several goroutines at
// once (fanout arms run concurrently); implementations must be safe for
// that and must not block for long. The language server streams its
// transcript and progress from these events.
type Observer interface {
	// SectionEnter is called when a section, chain entry or fanout arm
	// starts (and once for the H1 pass, with ID 0).
	SectionEnter(ev SectionEvent)
	// SectionExit is called when it ends; ev.Err is set on failure.
	SectionExit(ev SectionEvent)
	// ModelRound is called after each model round trip.
	ModelRound(ev ModelRoundEvent)
	// ToolCall is called after each tool dispatch.
	ToolCall(ev ToolCallEvent)
	// Log is called for each Lua log line.
	Log(ev LogEvent)
}

// SectionEvent describes one VM's life: the H1 pass, a walk entry, a chain
// entry or a fanout arm.
type SectionEvent struct {
	// ID is the run-global entry id (sys.id); 0 is the H1.
	ID int64
	// Name is the heading text without #s; Address is "## Name" ("" for H1).
	Name, Address string
	// Line is the heading's file line (the H1 line for the H1 pass).
	Line int
	// Depth is the execute/fanout depth (0 on the walk).
	Depth int
	// Index is the 1-based fanout arm index, 0 outside arms.
	Index int
	// Chain is true inside an execute chain.
	Chain bool
	// Jump is true for the target of a jump() on the walk.
	Jump bool
	// Parent is the ID of the entry whose code started this one (the
	// caller of execute or fanout, the arm a jump in an arm continues);
	// 0 for entries of the run's own walk.
	Parent int64
	// Reply is the reply the entry ended with (exit only), nil if none.
	Reply *string
	// Err is the failure (exit only).
	Err error
}

// ModelRoundEvent describes one completion round. Filled by prose.go and
// models_api.go.
type ModelRoundEvent struct {
	SectionID int64
	Section   string
	// Model is the catalog id.
	Model string
	// Round is 1-based within the prose block; Infer marks models.infer.
	Round int
	Infer bool
	// Prompt is the user text sent (the substituted prose or infer prompt).
	Prompt string
	// Text is the reply text, nil for a tool-call turn or an error.
	Text         *string
	FinishReason *string
	// ToolCalls is the number of tool calls in the reply.
	ToolCalls int
	Err       error
	// Line is the prose block's file line (the models.infer call's for
	// Infer), 0 when unknown.
	Line int
	// Duration is the round trip's wall-clock time.
	Duration time.Duration
	// Usage is the token count the gateway reported for the round, nil
	// when it reported none.
	Usage *gateway.Usage
}

// ToolCallEvent describes one tool dispatch. Filled by the tools code.
type ToolCallEvent struct {
	SectionID int64
	Section   string
	// Alias is the name the model called; Tool the registry id
	// ("server/name", "local/alias" for local tools).
	Alias, Tool string
	// Args is the compact JSON arguments; Result the output as sent back.
	Args, Result string
	Untrusted    bool
	Err          error
	// Line is the prose block's file line, 0 when unknown.
	Line int
	// Duration is the tool's wall-clock time.
	Duration time.Duration
}

// LogEvent is one `log(message)` line.
type LogEvent struct {
	SectionID int64
	Section   string
	// Line is the prompt file line of the log call, 0 when unknown.
	Line    int
	Message string
}

// nopObserver is used when Config.Observer is nil.
type nopObserver struct{}

func (nopObserver) SectionEnter(SectionEvent)  {}
func (nopObserver) SectionExit(SectionEvent)   {}
func (nopObserver) ModelRound(ModelRoundEvent) {}
func (nopObserver) ToolCall(ToolCallEvent)     {}
func (nopObserver) Log(LogEvent)               {}

// TextObserver is an Observer that shows a model's answer while it is
// written (the editor's Run output). When the run's observer is one and
// StreamsText reports true, prose rounds and model:infer ask the gateway
// to stream, and ModelText receives each piece of text as it arrives,
// before the round's ModelRound. Fanout arms call it concurrently.
type TextObserver interface {
	Observer
	StreamsText() bool
	ModelText(ev ModelTextEvent)
}

// ModelTextEvent is one piece of a round's answer text.
type ModelTextEvent struct {
	SectionID int64
	Section   string
	Model     string
	// Round is the round's number within its prose block (1 for infer).
	Round int
	// Prompt is the round's user text (the same on every piece).
	Prompt string
	// Text is the piece: the answer is the concatenation of the pieces.
	Text string
}

// textSink returns the function that passes a round's text pieces to
// obs, or nil when obs does not stream text.
func textSink(obs Observer, ev ModelTextEvent) func(string) {
	to, ok := obs.(TextObserver)
	if !ok || !to.StreamsText() {
		return nil
	}
	return func(s string) {
		e := ev
		e.Text = s
		to.ModelText(e)
	}
}
