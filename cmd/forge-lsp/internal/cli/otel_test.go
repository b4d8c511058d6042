package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/telemetry/telemetrytest"
)

var (
	attr  = telemetrytest.Attr
	names = telemetrytest.Names
)

// TestOTelOneTrace: `run --otel` through `gateway serve --otel` exports one
// trace: the run span, its section span, a GenAI chat span with the model,
// tokens and finish reason, and the gateway's server span for the same
// request joined to the run's trace through traceparent.
func TestOTelOneTrace(t *testing.T) {
	col := telemetrytest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	ep := gatewaytest.New(t, "endpoint-key-7781")
	ep.Plain = true
	ep.Script = func(*gateway.Request) gatewaytest.Reply {
		r := gatewaytest.Text("hello there")
		r.Usage = &gateway.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15}
		return r
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "gateway.toml")
	os.WriteFile(file, []byte(`[server]
bind = "127.0.0.1:0"
api_key = "served-key"

[[endpoint]]
id = "ep"
protocol = "openai"
base_url = "`+ep.BaseURL()+`"
api_key = "endpoint-key-7781"

[[model]]
name = "m"
description = "general assistant model"
context = 8192
upstream = "m-1"
endpoints = ["ep"]
`), 0o600)
	addr, stop := serveGateway(t, os.LookupEnv, "serve", "--otel", file)
	defer stop()
	t.Setenv(gateway.EnvURL, "http://"+addr+"/v1")
	t.Setenv(gateway.EnvKey, "served-key")
	p := writePrompt(t, "```lua\nmodels.default(\"m\", \"general assistant model\")\n```\n\n## Greet\n\nSay hi.\n")
	code, out, errs := runCLI(t, "--otel", p)
	if code != 0 || !strings.Contains(out, "hello there") {
		t.Fatalf("run: %d %q %q", code, out, errs)
	}
	stop() // the gateway's spans are exported at its shutdown
	var spans []*tracepb.Span
	deadline := time.Now().Add(10 * time.Second)
	byName := map[string]*tracepb.Span{}
	for {
		spans = col.Spans()
		for _, s := range spans {
			byName[s.Name] = s
		}
		if byName["run p"] != nil && byName["chat m"] != nil && len(spans) >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	run, section := byName["run p"], byName["section Greet"]
	if run == nil || section == nil {
		t.Fatalf("spans %v", names(spans))
	}
	var client, server *tracepb.Span
	for _, s := range spans {
		if s.Name == "chat m" && s.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			client = s
		}
		if s.Name == "chat m" && s.Kind == tracepb.Span_SPAN_KIND_SERVER {
			server = s
		}
	}
	if client == nil || server == nil {
		t.Fatalf("no client and server chat spans: %v", names(spans))
	}
	for _, s := range spans {
		if !bytes.Equal(s.TraceId, run.TraceId) {
			t.Errorf("span %q is in another trace", s.Name)
		}
	}
	if !bytes.Equal(section.ParentSpanId, run.SpanId) || !bytes.Equal(client.ParentSpanId, section.SpanId) || !bytes.Equal(server.ParentSpanId, run.SpanId) {
		t.Errorf("parents: section %x client %x server %x; run %x section %x", section.ParentSpanId, client.ParentSpanId, server.ParentSpanId, run.SpanId, section.SpanId)
	}
	if attr(client, "gen_ai.operation.name") != "chat" || attr(client, "gen_ai.request.model") != "m" || attr(client, "gen_ai.usage.input_tokens") != "12" ||
		attr(client, "gen_ai.usage.output_tokens") != "3" || attr(client, "gen_ai.response.finish_reasons") != "stop" || attr(client, "code.file.path") != p {
		t.Errorf("chat span attributes %v", client.Attributes)
	}
	if attr(client, "gen_ai.prompt") != "" {
		t.Error("prompt text exported without --otel-content")
	}
	if attr(server, "promptforge.gateway.upstream_model") != "m-1" || attr(server, "gen_ai.usage.input_tokens") != "12" || attr(server, "promptforge.gateway.queue_wait_ms") == "" {
		t.Errorf("gateway span attributes %v", server.Attributes)
	}
	gwSvc, runSvc := col.Service(server), col.Service(run)
	if gwSvc != "forge-lsp-gateway" || runSvc != "forge-lsp" {
		t.Errorf("service names: gateway %q, run %q", gwSvc, runSvc)
	}
	for _, s := range spans {
		for _, a := range s.Attributes {
			if strings.Contains(a.GetValue().String(), "endpoint-key-7781") || strings.Contains(a.GetValue().String(), "served-key") {
				t.Errorf("a key on span %q", s.Name)
			}
		}
	}
}

// TestOTelCollectorDown: with export on and nothing listening, the run's
// result is the same and it ends promptly (the exporter gives up within
// its shutdown bound, never failing the run).
func TestOTelCollectorDown(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	p := writePrompt(t, "## A\n\n```lua\nreturn \"same result\"\n```\n")
	t0 := time.Now()
	code, out, errs := runCLI(t, "--otel", p)
	if code != 0 || strings.TrimSpace(out) != "same result" || errs != "" {
		t.Fatalf("%d %q %q", code, out, errs)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("the run took %v with the collector down", d)
	}
}

// BenchmarkOTelCollectorDown: a run with export on and no collector
// listening against the same run without export, alternately in the same
// run; reports the ratio of their median wall times (target: within 5%).
func BenchmarkOTelCollectorDown(b *testing.B) {
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	dir := b.TempDir()
	p := filepath.Join(dir, "p.md")
	os.WriteFile(p, []byte(hdr+"## A\n\n```lua\nlocal s = 0\nfor i = 1, 20000 do s = s + i end\nreturn tostring(s)\n```\n\n## B\n\n```lua\nreturn \"done\"\n```\n"), 0o600)
	once := func(args ...string) time.Duration {
		var out, errb bytes.Buffer
		t0 := time.Now()
		if code := runCmd(context.Background(), append(args, p), strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("%d %s", code, errb.String())
		}
		return time.Since(t0)
	}
	var off, on []time.Duration
	for i := 0; i < b.N; i++ {
		off = append(off, once())
		on = append(on, once("--otel"))
	}
	med := func(x []time.Duration) float64 {
		slices.Sort(x)
		return float64(x[len(x)/2].Microseconds())
	}
	b.ReportMetric(med(off), "off-µs")
	b.ReportMetric(med(on), "collector-down-µs")
	b.ReportMetric(med(on)/med(off), "down/off")
	b.ReportMetric(0, "ns/op")
}
