package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// jaegerTrace is a trace as Jaeger's query API (GET /api/traces) returns it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		ProcessID     string `json:"processID"`
		References    []struct {
			RefType string `json:"refType"`
			TraceID string `json:"traceID"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"tags"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// freePort is a loopback TCP port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// startJaeger runs $JAEGER_BIN with .ci/jaeger/config.yaml on free ports
// and returns its OTLP/HTTP and query base URLs once both answer.
func startJaeger(t *testing.T, bin string) (otlp, query string) {
	t.Helper()
	cfg, err := filepath.Abs("../../../../.ci/jaeger/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	otlpPort, queryPort, grpcPort := freePort(t), freePort(t), freePort(t)
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Env = append(os.Environ(), "JAEGER_OTLP_PORT="+otlpPort, "JAEGER_QUERY_PORT="+queryPort, "JAEGER_GRPC_PORT="+grpcPort)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("jaeger's log:\n%s", logs.String())
		}
	})
	otlp, query = "http://127.0.0.1:"+otlpPort, "http://127.0.0.1:"+queryPort
	// Ready when the query API lists services and the receiver accepts
	// connections; the deadline only bounds a Jaeger that never starts.
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("jaeger exited: %v\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get(query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", "127.0.0.1:"+otlpPort); err == nil {
				c.Close()
				if resp.StatusCode == 200 {
					return otlp, query
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not start within 90 s:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestJaegerOneTrace (CI: .ci/jaeger.sh): a real Jaeger receives the
// example prompt examples/topics.md run with export on through `gateway
// serve --otel`, and its query API returns one trace with the run's span
// tree (run, section, fanout arms, GenAI chat spans with model and
// tokens) and the gateway's server spans inside it. Skipped when
// JAEGER_BIN is unset: Jaeger is a large build (.ci/jaeger.sh).
func TestJaegerOneTrace(t *testing.T) {
	bin := os.Getenv("JAEGER_BIN")
	if bin == "" {
		t.Skip("JAEGER_BIN is unset: .ci/jaeger.sh builds Jaeger and runs this test")
	}
	otlp, query := startJaeger(t, bin)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "")
	ep := gatewaytest.New(t, "endpoint-key-5521")
	ep.Plain = true
	ep.Script = func(req *gateway.Request) gatewaytest.Reply {
		r := gatewaytest.Text("Two plain sentences. About the topic.")
		r.Usage = &gateway.Usage{PromptTokens: 21, CompletionTokens: 8, TotalTokens: 29}
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
api_key = "endpoint-key-5521"

[[model]]
name = "writer"
description = "a careful general-purpose writing model"
context = 8192
upstream = "writer-1"
endpoints = ["ep"]
`), 0o600)
	addr, stop := serveGateway(t, os.LookupEnv, "serve", "--otel", file)
	defer stop()
	t.Setenv(gateway.EnvURL, "http://"+addr+"/v1")
	t.Setenv(gateway.EnvKey, "served-key")
	prompt, _ := filepath.Abs("../../../../examples/topics.md")
	code, out, errs := runCLI(t, "--otel", prompt)
	if code != 0 || !strings.Contains(out, "Two plain sentences.") {
		t.Fatalf("run: %d %q %q", code, out, errs)
	}
	stop() // the gateway's spans are exported at its shutdown

	// The batch processor stores spans within 100 ms; the deadline only
	// bounds a trace that never becomes whole.
	var tr jaegerTrace
	deadline := time.Now().Add(60 * time.Second)
	for {
		traces, err := jaegerTraces(query, "forge-lsp")
		if err == nil && len(traces) == 1 {
			tr = traces[0]
			if len(tr.Spans) >= 12 { // run, H1 pass, section, 3 arms, 3 chat + 3 gateway spans
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger has %d traces for forge-lsp (want 1), the last with %d spans (err %v)", len(traces), len(tr.Spans), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	type span struct {
		id, name, parent, service string
		tags                      map[string]string
	}
	byID := map[string]*span{}
	var spans []*span
	for _, s := range tr.Spans {
		sp := &span{id: s.SpanID, name: s.OperationName, service: tr.Processes[s.ProcessID].ServiceName, tags: map[string]string{}}
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" {
				if r.TraceID != tr.TraceID {
					t.Errorf("span %q refers to another trace", s.OperationName)
				}
				sp.parent = r.SpanID
			}
		}
		for _, tg := range s.Tags {
			sp.tags[tg.Key] = fmt.Sprint(tg.Value)
		}
		byID[sp.id] = sp
		spans = append(spans, sp)
	}
	find := func(name, service string) []*span {
		var out []*span
		for _, s := range spans {
			if s.name == name && s.service == service {
				out = append(out, s)
			}
		}
		return out
	}
	runs, plans := find("run topics", "forge-lsp"), find("section Plan", "forge-lsp")
	if len(runs) != 1 || len(plans) != 1 || runs[0].parent != "" || plans[0].parent != runs[0].id {
		t.Fatalf("run and section spans: %d, %d; the trace: %+v", len(runs), len(plans), spans)
	}
	if runs[0].tags["gen_ai.operation.name"] != "invoke_agent" || runs[0].tags["code.file.path"] != prompt {
		t.Errorf("run span tags %v", runs[0].tags)
	}
	for i := 1; i <= 3; i++ {
		arm := find("fanout arm "+strconv.Itoa(i)+" Paragraph", "forge-lsp")
		if len(arm) != 1 || arm[0].parent != plans[0].id {
			t.Errorf("fanout arm %d: %d spans, or not under the section", i, len(arm))
		}
	}
	chats, served := find("chat writer", "forge-lsp"), find("chat writer", "forge-lsp-gateway")
	if len(chats) != 3 || len(served) != 3 {
		t.Fatalf("%d chat spans of the run, %d of the gateway (want 3 and 3): %+v", len(chats), len(served), spans)
	}
	for _, c := range chats {
		p := byID[c.parent]
		if p == nil || !strings.HasPrefix(p.name, "fanout arm ") {
			t.Errorf("chat span not under a fanout arm: parent %+v", p)
		}
		if c.tags["gen_ai.operation.name"] != "chat" || c.tags["gen_ai.request.model"] != "writer" || c.tags["gen_ai.usage.input_tokens"] != "21" ||
			c.tags["gen_ai.usage.output_tokens"] != "8" || c.tags["span.kind"] != "client" || c.tags["gen_ai.prompt"] != "" {
			t.Errorf("chat span tags %v", c.tags)
		}
	}
	for _, s := range served {
		if byID[s.parent] == nil || s.tags["span.kind"] != "server" || s.tags["promptforge.gateway.upstream_model"] != "writer-1" || s.tags["promptforge.gateway.queue_wait_ms"] == "" {
			t.Errorf("gateway span: parent %q, tags %v", s.parent, s.tags)
		}
	}
	for _, s := range spans {
		for k, v := range s.tags {
			if strings.Contains(v, "endpoint-key-5521") || strings.Contains(v, "served-key") {
				t.Errorf("a key in tag %s of span %q", k, s.name)
			}
		}
	}
}

// jaegerTraces asks Jaeger's query API for the service's traces.
func jaegerTraces(query, service string) ([]jaegerTrace, error) {
	resp, err := http.Get(query + "/api/traces?limit=20&lookback=1h&service=" + service)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []jaegerTrace `json:"data"`
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET /api/traces: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	return body.Data, err
}
