package telemetry

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/forge-lsp/forge-lsp/engine/telemetry/telemetrytest"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// exportOne sets up export from env, ends one span and shuts down, so
// the span has been sent when it returns.
func exportOne(t *testing.T, env map[string]string, name string) {
	t.Helper()
	tel, err := Setup(context.Background(), Options{Service: "otlp-test", Env: envOf(env)})
	if err != nil || tel == nil {
		t.Fatalf("Setup: %v, %v", tel, err)
	}
	_, span := tel.Tracer().Start(context.Background(), name)
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), ExportTimeout)
	defer cancel()
	if err := tel.tp.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// TestOTLPHTTPExport: http/protobuf to the base URL's /v1/traces, with
// the headers of OTEL_EXPORTER_OTLP_HEADERS (URL-decoded).
func TestOTLPHTTPExport(t *testing.T) {
	var mu sync.Mutex
	var auth, ctype string
	c := telemetrytest.New(t)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth, ctype = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		resp, err := http.Post(c.URL+r.URL.Path, r.Header.Get("Content-Type"), strings.NewReader(string(b)))
		if err != nil {
			w.WriteHeader(502)
			return
		}
		w.WriteHeader(resp.StatusCode)
		resp.Body.Close()
	}))
	defer proxy.Close()
	exportOne(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": proxy.URL + "/",
		"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=Basic%20abc%3D, x-other = 1",
	}, "http-span")
	if telemetrytest.ByName(c.Spans(), "http-span") == nil {
		t.Fatalf("collector got %v, want http-span", telemetrytest.Names(c.Spans()))
	}
	mu.Lock()
	defer mu.Unlock()
	if auth != "Basic abc=" || ctype != "application/x-protobuf" {
		t.Errorf("Authorization %q, Content-Type %q", auth, ctype)
	}
}

type traceServer struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []string
	auth  []string
	fail  bool
}

func (s *traceServer) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	s.auth = append(s.auth, md.Get("authorization")...)
	if s.fail {
		return nil, status.Error(codes.Unavailable, "collector busy")
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s.spans = append(s.spans, sp.Name)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func grpcCollector(t *testing.T) (*traceServer, string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	ts := &traceServer{}
	coltracepb.RegisterTraceServiceServer(srv, ts)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return ts, l.Addr().String()
}

// TestOTLPGRPCExport: OTEL_EXPORTER_OTLP_PROTOCOL=grpc talks to a real
// gRPC trace service, plaintext (an http:// endpoint, or host:port with
// INSECURE=true), with the headers as metadata.
func TestOTLPGRPCExport(t *testing.T) {
	ts, addr := grpcCollector(t)
	exportOne(t, map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr,
		"OTEL_EXPORTER_OTLP_HEADERS":  "authorization=Bearer%20k",
	}, "grpc-span")
	exportOne(t, map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": addr,
		"OTEL_EXPORTER_OTLP_INSECURE":        "true",
	}, "grpc-span-2")
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if strings.Join(ts.spans, ",") != "grpc-span,grpc-span-2" {
		t.Errorf("gRPC collector got spans %v", ts.spans)
	}
	if len(ts.auth) != 1 || ts.auth[0] != "Bearer k" {
		t.Errorf("authorization metadata %q", ts.auth)
	}
}

// TestOTLPGRPCStatus: a gRPC error status fails the upload.
func TestOTLPGRPCStatus(t *testing.T) {
	ts, addr := grpcCollector(t)
	ts.fail = true
	c, err := newOTLPClient(true, envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	rs := &tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: "x", TraceId: make([]byte, 16), SpanId: make([]byte, 8)}}}}}
	err = c.UploadTraces(context.Background(), []*tracepb.ResourceSpans{proto.Clone(rs).(*tracepb.ResourceSpans)})
	if err == nil || !strings.Contains(err.Error(), "collector busy") {
		t.Errorf("UploadTraces to a failing collector: %v", err)
	}
}

// TestOTLPEndpoints: where each protocol sends, from the variables.
func TestOTLPEndpoints(t *testing.T) {
	for _, tc := range []struct {
		grpc bool
		env  map[string]string
		want string
	}{
		{false, nil, "http://localhost:4318/v1/traces"},
		{false, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h/api/otel"}, "https://h/api/otel/v1/traces"},
		{false, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t/x"}, "https://t/x"},
		{true, nil, "http://localhost:4317" + grpcExport},
		{true, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"}, "https://collector:4317" + grpcExport},
		{true, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:443/ignored"}, "https://c:443" + grpcExport},
	} {
		c, err := newOTLPClient(tc.grpc, envOf(tc.env))
		if err != nil || c.url != tc.want {
			t.Errorf("grpc=%v %v: %v %v, want %s", tc.grpc, tc.env, c, err, tc.want)
		}
	}
}
