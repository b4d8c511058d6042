package dap

import (
	"bytes"
	"context"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	"github.com/forge-lsp/forge-lsp/engine/telemetry/telemetrytest"
)

// TestOTelDebuggedRun: with export on, a debugged run exports the span
// tree `forge-lsp run` does: run, sections, the model rounds and tool
// call, the execute chain entry and the fanout arms under their section,
// the jump's target under the run.
func TestOTelDebuggedRun(t *testing.T) {
	col := telemetrytest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{Enabled: true})
	if err != nil || tel == nil {
		t.Fatalf("setup: %v", err)
	}
	prog, cassette := fixture(t)
	c := start(t, Options{Telemetry: tel})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", NoDebug: true, Replay: cassette, Execution: execution}, nil, nil)
	if out, code := c.finish(); code != 0 {
		t.Fatalf("exit %d, output %q", code, out)
	}
	tel.Shutdown()
	tree := func(s []*tracepb.Span) (*tracepb.Span, error) {
		return telemetrytest.RunTree(s, "run p", "section Main", "chat test-model")
	}
	spans := col.Wait(30*time.Second, func(s []*tracepb.Span) bool {
		_, err := tree(s)
		return err == nil && telemetrytest.ByName(s, "fanout arm 2 Arm") != nil
	})
	run, err := tree(spans)
	if err != nil {
		t.Fatal(err)
	}
	if telemetrytest.Attr(run, telemetry.AttrHost) != "dap" {
		t.Errorf("run span attributes %v", run.Attributes)
	}
	main, next := telemetrytest.ByName(spans, "section Main"), telemetrytest.ByName(spans, "section Next")
	for name, parent := range map[string]*tracepb.Span{"jump Last": run, "execute Helper": main, "execute_tool echo": main, "fanout arm 1 Arm": next, "fanout arm 2 Arm": next} {
		s := telemetrytest.ByName(spans, name)
		if s == nil || parent == nil || !bytes.Equal(s.ParentSpanId, parent.SpanId) {
			t.Errorf("span %q missing or not under its section: %v", name, telemetrytest.Names(spans))
		}
	}
}
