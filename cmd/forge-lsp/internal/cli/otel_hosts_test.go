package cli

import (
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/forge-lsp/forge-lsp/engine/telemetry/telemetrytest"
)

// TestOTelTestCommand: `forge-lsp test --otel` exports a span tree per
// case run, as `run` does: a run span naming the case and its test file,
// the section under it, the model round under the section.
func TestOTelTestCommand(t *testing.T) {
	col := telemetrytest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	dir := writeSuite(t)
	srv := greetServer(t, false)
	code, out, errs := testCLI(t, envOf(srv), "--otel", "--record", dir, "--run", "^greets Bob$")
	if code != 0 || !strings.HasSuffix(out, "1 passed, 0 failed\n") {
		t.Fatalf("test: code %d\n%s\n%s", code, out, errs)
	}
	spans := col.Wait(30*time.Second, func(s []*tracepb.Span) bool {
		_, err := telemetrytest.RunTree(s, "run greet", "section Hello", "chat test-model")
		return err == nil
	})
	run, err := telemetrytest.RunTree(spans, "run greet", "section Hello", "chat test-model")
	if err != nil {
		t.Fatal(err)
	}
	if attr(run, "promptforge.host") != "test" || attr(run, "promptforge.test.case") != "greets Bob" || !strings.HasSuffix(attr(run, "promptforge.test.file"), "greet.test.yaml") {
		t.Errorf("run span attributes %v", run.Attributes)
	}
	if tool := telemetrytest.ByName(spans, "execute_tool remember"); tool == nil {
		t.Errorf("no tool call span: %v", names(spans))
	}
}
