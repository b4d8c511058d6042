// Package loop is the tool-call dispatch loop of docs/language.md#tool-loop: it sends a
// section's conversation to the model, dispatches the tool calls of each
// turn in order, echoes their results and re-prompts until the model
// answers with text, the round cap is reached, or something fails. It
// knows nothing about Lua: local tools arrive as Binding.Call functions.
package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

// Completer sends one chat completion (gateway.Client implements it).
type Completer interface {
	Complete(ctx context.Context, req *gateway.Request) (*gateway.Response, error)
}

// Binding is one tool in a prose block's scope, as the model sees it.
type Binding struct {
	// Alias is the function name on the wire.
	Alias string
	// Description is the model-facing description (after precedence).
	Description string
	// Parameters is the JSON Schema object.
	Parameters json.RawMessage
	// Tool is the registry id, or ("local", alias) for a local tool.
	Tool toolrule.ID
	// Local marks a Lua handler: its failures are Lua errors.
	Local bool
	// Call runs the tool with the model's arguments (a JSON object).
	Call func(ctx context.Context, arguments string) (tools.Output, error)
}

// Model is the frozen completion setup of a section.
type Model struct {
	// ID is the catalog id sent as "model".
	ID string
	// Dialect is the catalog tool_dialect: "openai" (or "") sends tools
	// natively, "gemma3_tool_code" emulates them in text.
	Dialect     string
	Temperature *float64
	MaxTokens   *int64
	Thinking    *bool
}

// Round describes one completed (or failed) model round for observers.
type Round struct {
	N         int
	Response  *gateway.Response
	Err       error
	Duration  time.Duration
	ToolCalls int
}

// Dispatch describes one tool call for observers.
type Dispatch struct {
	Alias     string
	Tool      toolrule.ID
	Arguments string
	// Result is the text sent back to the model (enveloped if untrusted).
	Result    string
	Untrusted bool
	Err       error
	Duration  time.Duration
}

// Params is one prose block's inference.
type Params struct {
	Client Completer
	Model  Model
	// Scope is the block's effective tool scope in advertising order.
	Scope []Binding
	// Declared reports whether an alias was bound by tools.bind anywhere
	// in the prompt; it picks the out-of-scope error variant. May be nil.
	Declared func(alias string) bool
	// Envelope wraps untrusted output (one per run).
	Envelope *tools.Envelope
	// Count is called for every call to an in-scope alias, before the
	// dispatch, so that failed calls count (tools.calls).
	Count func(alias string)
	// Loop selects the full loop (final prose) over a single shot.
	Loop bool
	// MaxIterations is the round cap of the loop (max_tool_iterations);
	// zero means DefaultMaxIterations.
	MaxIterations int
	// MaxCalls caps the tool calls of one model reply; 0 means no cap.
	// A reply over it fails before any of its calls runs.
	MaxCalls int
	// OnText, when set, receives round n's answer text as it streams
	// (gateway.Request.OnText); nil asks for no stream.
	OnText func(round int, text string)
	// OnRound and OnDispatch observe progress; both may be nil.
	OnRound    func(Round)
	OnDispatch func(Dispatch)
}

// Result is what a prose block produced.
type Result struct {
	// Text is the reply; nil means "leave reply unchanged" (single shot
	// that ended in tool calls).
	Text *string
	// FinishReason of the last round; HasFinishReason false when absent.
	FinishReason    string
	HasFinishReason bool
	// Rounds is the number of model rounds made.
	Rounds int
}

// DefaultMaxIterations is the tool loop's round cap when the prompt sets
// no max_tool_iterations (docs/language.md#limits); run.Limits takes its
// default from here.
const DefaultMaxIterations = rules.DefaultMaxToolIterations

// Run appends prose as a user message to history and runs the block:
// one round for single shot, up to MaxIterations for the loop. history is
// the section conversation and grows with every tool-call turn.
func Run(ctx context.Context, p *Params, history *[]gateway.Message, prose string) (Result, error) {
	*history = append(*history, gateway.Message{Role: "user", Content: prose})
	rounds := 1
	if p.Loop {
		rounds = p.MaxIterations
		if rounds <= 0 {
			rounds = DefaultMaxIterations
		}
	}
	specs := make([]gateway.ToolSpec, len(p.Scope))
	byAlias := make(map[string]*Binding, len(p.Scope))
	for i := range p.Scope {
		b := &p.Scope[i]
		specs[i] = gateway.ToolSpec{Type: "function", Function: gateway.FunctionSpec{Name: b.Alias, Description: b.Description, Parameters: b.Parameters}}
		byAlias[b.Alias] = b
	}
	dispatched := 0
	var res Result
	for round := 1; round <= rounds; round++ {
		req := &gateway.Request{Model: p.Model.ID, Messages: *history, Temperature: p.Model.Temperature, MaxTokens: p.Model.MaxTokens}
		if p.Model.Thinking != nil {
			req.ChatTemplateKwargs = &gateway.TemplateKwargs{EnableThinking: *p.Model.Thinking}
		}
		gemma := p.Model.Dialect == DialectGemma
		switch {
		case len(specs) == 0:
		case gemma:
			// Emulated tools: no tools field, a system guide in front.
			req.Messages = append([]gateway.Message{{Role: "system", Content: gemmaGuide(p.Scope)}}, *history...)
		default:
			req.Tools, req.ToolChoice = specs, "auto"
		}
		if p.OnText != nil && !(gemma && len(specs) > 0) { // emulated tool calls are text the loop parses
			n := round
			req.OnText = func(s string) { p.OnText(n, s) }
		}
		start := time.Now()
		resp, err := p.Client.Complete(ctx, req)
		res.Rounds = round
		if p.OnRound != nil {
			ev := Round{N: round, Response: resp, Err: err, Duration: time.Since(start)}
			if resp != nil {
				ev.ToolCalls = len(resp.ToolCalls)
			}
			p.OnRound(ev)
		}
		if err != nil {
			return res, err
		}
		res.FinishReason, res.HasFinishReason = resp.FinishReason, resp.HasFinishReason
		calls, emulated := resp.ToolCalls, false
		if gemma && len(calls) == 0 && len(specs) > 0 {
			fc, isFence, ferr := gemmaCalls(resp.Content)
			if ferr != nil {
				return res, &FenceError{Err: ferr}
			}
			calls, emulated = fc, isFence
		}
		if len(calls) == 0 {
			if strings.TrimSpace(resp.Content) != "" {
				text := resp.Content
				res.Text = &text
				return res, nil
			}
			// Empty reply: the clean exit needs the loop, "stop" and an
			// earlier successful dispatch in this block.
			if p.Loop && resp.HasFinishReason && resp.FinishReason == "stop" && dispatched > 0 {
				empty := ""
				res.Text = &empty
				return res, nil
			}
			return res, &EmptyReplyError{FinishReason: resp.FinishReason, HasFinishReason: resp.HasFinishReason, Reasoning: resp.Reasoning != ""}
		}
		if p.MaxCalls > 0 && len(calls) > p.MaxCalls {
			return res, &TooManyCallsError{Calls: len(calls), Max: p.MaxCalls}
		}
		results := make([]gateway.Message, 0, len(calls))
		texts := make([]string, 0, len(calls))
		for _, call := range calls {
			b, ok := byAlias[call.Function.Name]
			if !ok {
				return res, outOfScope(call.Function.Name, p)
			}
			if p.Count != nil {
				p.Count(b.Alias)
			}
			t0 := time.Now()
			out, err := b.Call(ctx, call.Function.Arguments)
			ev := Dispatch{Alias: b.Alias, Tool: b.Tool, Arguments: call.Function.Arguments, Err: err, Duration: time.Since(t0)}
			if err != nil {
				if p.OnDispatch != nil {
					p.OnDispatch(ev)
				}
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				return res, &ToolCallError{Alias: b.Alias, Tool: b.Tool, Local: b.Local, Err: err}
			}
			text := out.Text()
			if out.IsUntrusted() {
				text = p.Envelope.Wrap(text)
			}
			ev.Result, ev.Untrusted = text, out.IsUntrusted()
			if p.OnDispatch != nil {
				p.OnDispatch(ev)
			}
			dispatched++
			texts = append(texts, text)
			results = append(results, gateway.Message{Role: "tool", Content: text, ToolCallID: call.ID})
		}
		if emulated {
			*history = append(*history, gateway.Message{Role: "assistant", Content: resp.Content},
				gateway.Message{Role: "user", Content: gemmaResults(calls, texts)})
		} else {
			*history = append(*history, gateway.Message{Role: "assistant", Content: "", ToolCalls: calls})
			*history = append(*history, results...)
		}
		if !p.Loop {
			return res, nil
		}
	}
	return res, &ExhaustedError{Rounds: rounds}
}

func outOfScope(name string, p *Params) error {
	in := make([]string, 0, len(p.Scope))
	for _, b := range p.Scope {
		in = append(in, b.Alias)
	}
	sort.Strings(in)
	return &OutOfScopeError{Name: name, Declared: p.Declared != nil && p.Declared(name), InScope: in}
}

// TooManyCallsError: one model reply asked for more tool calls than the
// per-round cap; none of them ran.
type TooManyCallsError struct{ Calls, Max int }

func (e *TooManyCallsError) Error() string {
	return fmt.Sprintf("the model asked for %d tool calls in one reply, more than the limit of %d per round; none was run", e.Calls, e.Max)
}

// ExhaustedError: every round of the loop returned tool calls.
type ExhaustedError struct{ Rounds int }

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("tool-call loop did not converge: the model was still calling tools after %d rounds (max_tool_iterations)", e.Rounds)
}

// OutOfScopeError: the model called a tool the block does not offer.
type OutOfScopeError struct {
	Name string
	// Declared is true when the alias is bound somewhere in the prompt
	// but not in this section's scope.
	Declared bool
	InScope  []string
}

func (e *OutOfScopeError) Error() string {
	q := make([]string, len(e.InScope))
	for i, a := range e.InScope {
		q[i] = fmt.Sprintf("%q", a)
	}
	msg := fmt.Sprintf("tool %q is not in this section's scope; in-scope aliases: [%s]", e.Name, strings.Join(q, ", "))
	if e.Declared {
		msg += " (alias was declared by tools.bind but not added to this section's scope)"
	}
	return msg
}

// ToolCallError: a dispatched tool failed. It ends the run.
type ToolCallError struct {
	Alias string
	Tool  toolrule.ID
	Local bool
	Err   error
}

func (e *ToolCallError) Error() string {
	if e.Local {
		return fmt.Sprintf("local tool %q failed: %v", e.Alias, e.Err)
	}
	return fmt.Sprintf("tool call failure: %q (%s): %v", e.Alias, e.Tool, e.Err)
}

// Unwrap returns the tool's error.
func (e *ToolCallError) Unwrap() error { return e.Err }

// FenceError: a gemma3_tool_code reply was a tool_code fence that could
// not be parsed (kind Completion, malformed response).
type FenceError struct{ Err error }

func (e *FenceError) Error() string { return "malformed tool_code reply: " + e.Err.Error() }

// Unwrap returns the parse error.
func (e *FenceError) Unwrap() error { return e.Err }

// EmptyReplyError: no tool calls and blank content, outside the clean
// exit.
type EmptyReplyError struct {
	FinishReason    string
	HasFinishReason bool
	Reasoning       bool
}

func (e *EmptyReplyError) Error() string {
	if e.Reasoning {
		return "empty model reply: reasoning content was present but ignored"
	}
	return "empty model reply"
}
