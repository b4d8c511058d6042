package telemetry

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/forge-lsp/forge-lsp/engine/run"
)

// Span and attribute names (docs/observability.md#spans). The GenAI ones
// follow the OpenTelemetry semantic conventions for generative AI.
const (
	AttrOperation    = "gen_ai.operation.name"
	AttrRequestModel = "gen_ai.request.model"
	AttrInputTokens  = "gen_ai.usage.input_tokens"
	AttrOutputTokens = "gen_ai.usage.output_tokens"
	AttrFinish       = "gen_ai.response.finish_reasons"
	AttrToolName     = "gen_ai.tool.name"
	AttrPrompt       = "gen_ai.prompt"
	AttrCompletion   = "gen_ai.completion"
	AttrFile         = "code.file.path"
	AttrLine         = "code.line.number"
	AttrSection      = "promptforge.section"
	// AttrHost says what ran the prompt: run, test, mcp or dap.
	AttrHost = "promptforge.host"
	// AttrTestCase and AttrTestFile name a `forge-lsp test` case.
	AttrTestCase = "promptforge.test.case"
	AttrTestFile = "promptforge.test.file"
)

// Run is one run's span tree: a run span, a span per section, chain entry
// and fanout arm, and under them a span per model round (GenAI "chat")
// and per tool call ("execute_tool"). It is a run.Observer; Context gives
// the run's context carrying the run span, so the engine's gateway
// requests carry its traceparent and a served gateway's spans join the
// trace.
type Run struct {
	t    *Telemetry
	file string
	ctx  context.Context
	span trace.Span

	mu       sync.Mutex
	sections map[int64]trace.Span
	ctxs     map[int64]context.Context
}

// StartRun starts the run span for the prompt file (nil when t is nil);
// attrs are the host's own (AttrHost, a test's case, an MCP prompt).
func (t *Telemetry) StartRun(ctx context.Context, file, prompt string, attrs ...attribute.KeyValue) *Run {
	if t == nil {
		return nil
	}
	ctx, span := t.tracer.Start(ctx, "run "+prompt, trace.WithAttributes(
		attribute.String(AttrOperation, "invoke_agent"),
		attribute.String("gen_ai.agent.name", prompt),
		attribute.String(AttrFile, file)), trace.WithAttributes(attrs...))
	return &Run{t: t, file: file, ctx: ctx, span: span, sections: map[int64]trace.Span{}, ctxs: map[int64]context.Context{}}
}

// Context is ctx's values with the run span (ctx itself when r is nil).
func (r *Run) Context(ctx context.Context) context.Context {
	if r == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, r.span)
}

// End ends the run span with the run's error, if any.
func (r *Run) End(err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	for id, s := range r.sections { // sections a failure left open
		s.End()
		delete(r.sections, id)
	}
	r.mu.Unlock()
	if err != nil {
		r.span.RecordError(err)
		r.span.SetStatus(codes.Error, err.Error())
	}
	r.span.End()
}

func (r *Run) parent(id int64) context.Context {
	if c, ok := r.ctxs[id]; ok {
		return c
	}
	return r.ctx
}

// SectionEnter starts a section, chain entry or fanout arm span.
func (r *Run) SectionEnter(ev run.SectionEvent) {
	name := "section " + ev.Name
	switch {
	case ev.ID == 0:
		name = "section (top)"
	case ev.Index > 0:
		name = "fanout arm " + strconv.Itoa(ev.Index) + " " + ev.Name
	case ev.Jump:
		name = "jump " + ev.Name
	case ev.Chain:
		name = "execute " + ev.Name
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	parent := r.ctx
	if ev.Parent != 0 {
		parent = r.parent(ev.Parent)
	}
	ctx, span := r.t.tracer.Start(parent, name, trace.WithAttributes(
		attribute.String(AttrSection, ev.Name),
		attribute.String(AttrFile, r.file),
		attribute.Int(AttrLine, ev.Line),
		attribute.Int("promptforge.depth", ev.Depth)))
	r.sections[ev.ID] = span
	r.ctxs[ev.ID] = ctx
}

// SectionExit ends it.
func (r *Run) SectionExit(ev run.SectionEvent) {
	r.mu.Lock()
	span := r.sections[ev.ID]
	delete(r.sections, ev.ID)
	delete(r.ctxs, ev.ID)
	r.mu.Unlock()
	if span == nil {
		return
	}
	if ev.Err != nil {
		span.RecordError(ev.Err)
		span.SetStatus(codes.Error, ev.Err.Error())
	}
	span.End()
}

// ModelRound records a prose round as a GenAI chat span.
func (r *Run) ModelRound(ev run.ModelRoundEvent) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, "chat"),
		attribute.String(AttrRequestModel, ev.Model),
		attribute.String(AttrSection, ev.Section),
		attribute.String(AttrFile, r.file),
		attribute.Int(AttrLine, ev.Line),
		attribute.Int("promptforge.round", ev.Round),
	}
	if ev.FinishReason != nil {
		attrs = append(attrs, attribute.StringSlice(AttrFinish, []string{*ev.FinishReason}))
	}
	if ev.Usage != nil {
		attrs = append(attrs, attribute.Int64(AttrInputTokens, ev.Usage.PromptTokens), attribute.Int64(AttrOutputTokens, ev.Usage.CompletionTokens))
	}
	if r.t.content {
		attrs = append(attrs, attribute.String(AttrPrompt, ev.Prompt))
		if ev.Text != nil {
			attrs = append(attrs, attribute.String(AttrCompletion, *ev.Text))
		}
	}
	r.after("chat "+ev.Model, ev.SectionID, ev.Duration, ev.Err, attrs)
}

// ToolCall records a tool dispatch.
func (r *Run) ToolCall(ev run.ToolCallEvent) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, "execute_tool"),
		attribute.String(AttrToolName, ev.Alias),
		attribute.String("promptforge.tool", ev.Tool),
		attribute.String(AttrSection, ev.Section),
		attribute.String(AttrFile, r.file),
		attribute.Int(AttrLine, ev.Line),
	}
	if r.t.content {
		attrs = append(attrs, attribute.String("gen_ai.tool.call.arguments", ev.Args), attribute.String("gen_ai.tool.call.result", ev.Result))
	}
	r.after("execute_tool "+ev.Alias, ev.SectionID, ev.Duration, ev.Err, attrs)
}

// Log is not traced (the run's own trace file holds log lines).
func (r *Run) Log(run.LogEvent) {}

// after records a span that ended now and lasted d.
func (r *Run) after(name string, section int64, d time.Duration, err error, attrs []attribute.KeyValue) {
	r.mu.Lock()
	parent := r.parent(section)
	r.mu.Unlock()
	end := time.Now()
	_, span := r.t.tracer.Start(parent, name, trace.WithTimestamp(end.Add(-d)), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End(trace.WithTimestamp(end))
}
