package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	"github.com/forge-lsp/forge-lsp/engine/telemetry/telemetrytest"
)

// TestOTelRunPrompt: with export on, each run_prompt call exports the span
// tree `forge-lsp run` does (run, section, model round), the run span
// naming the host and the catalog prompt, and no key on any span.
func TestOTelRunPrompt(t *testing.T) {
	col := telemetrytest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{Enabled: true})
	if err != nil || tel == nil {
		t.Fatalf("setup: %v", err)
	}
	f := newFixture(t, map[string]string{"ask.md": askPrompt}, "")
	f.srv.tel = tel
	cs := f.connect(nil)
	reply := gatewaytest.Text("forty-two")
	reply.Usage = &gateway.Usage{PromptTokens: 9, CompletionTokens: 2, TotalTokens: 11}
	f.gw.Enqueue(reply)
	var r RunResult
	call(t, cs, "run_prompt", map[string]any{"prompt": "ask", "args": "the question"}, &r)
	if r.Status != StatusCompleted || r.Value == nil || *r.Value != "forty-two" {
		t.Fatalf("ask: %+v", r)
	}
	tel.Shutdown()
	tree := func(s []*tracepb.Span) (*tracepb.Span, error) {
		return telemetrytest.RunTree(s, "run ask", "section Answer", "chat test-model")
	}
	spans := col.Wait(30*time.Second, func(s []*tracepb.Span) bool { _, err := tree(s); return err == nil })
	run, err := tree(spans)
	if err != nil {
		t.Fatal(err)
	}
	if telemetrytest.Attr(run, telemetry.AttrHost) != "mcp" || telemetrytest.Attr(run, AttrPrompt) != "ask" {
		t.Errorf("run span attributes %v", run.Attributes)
	}
	chat := telemetrytest.ByName(spans, "chat test-model")
	if telemetrytest.Attr(chat, telemetry.AttrInputTokens) != "9" || telemetrytest.Attr(chat, telemetry.AttrOutputTokens) != "2" {
		t.Errorf("chat span attributes %v", chat.Attributes)
	}
	for _, s := range spans {
		for _, a := range s.Attributes {
			if v := a.GetValue().String(); strings.Contains(v, gatewayKey) || strings.Contains(v, "bearer-secret-token") {
				t.Errorf("a key on span %q", s.Name)
			}
		}
	}
}
