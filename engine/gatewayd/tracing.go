package gatewayd

import (
	"context"
	"encoding/json"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// AttrQueueWait is the time a request waited for its endpoint's slot, in
// milliseconds (docs/observability.md#gateway-spans).
const AttrQueueWait = "promptforge.gateway.queue_wait_ms"

// startSpan starts a chat request's server span, a child of the caller's
// span when the request carries a W3C traceparent.
func (g *Gateway) startSpan(r *http.Request, m *model, req chatRequest) (context.Context, trace.Span) {
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return g.tracer.Start(ctx, "chat "+m.cfg.Name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", m.cfg.Name),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("promptforge.gateway.upstream_model", m.cfg.Upstream),
		attribute.String("promptforge.gateway.endpoint", m.ep.cfg.ID),
		attribute.Bool("promptforge.gateway.stream", req.stream),
		attribute.String("http.request.method", r.Method),
		attribute.String("url.path", r.URL.Path),
	))
}

// endSpan ends a request's span with its outcome.
func endSpan(span trace.Span, e *apiError) {
	if e != nil {
		span.SetAttributes(attribute.Int("http.response.status_code", e.status), attribute.String("error.type", e.code))
		span.SetStatus(codes.Error, e.msg)
	} else {
		span.SetAttributes(attribute.Int("http.response.status_code", 200))
	}
	span.End()
}

// recordUsage puts a completion's token counts and finish reasons on the
// span (only when tracing: it decodes the answer).
func recordUsage(span trace.Span, raw []byte) {
	var c struct {
		Usage *struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return
	}
	if c.Usage != nil {
		span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", c.Usage.PromptTokens), attribute.Int64("gen_ai.usage.output_tokens", c.Usage.CompletionTokens))
	}
	var reasons []string
	for _, ch := range c.Choices {
		if ch.FinishReason != "" {
			reasons = append(reasons, ch.FinishReason)
		}
	}
	if len(reasons) > 0 {
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", reasons))
	}
}
