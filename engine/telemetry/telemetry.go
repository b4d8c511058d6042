// Package telemetry exports forge-lsp's runs and gateway requests as
// OpenTelemetry traces over OTLP (docs/observability.md). It is off by
// default; Setup turns it on when the user asks (a --otel flag, or the
// standard OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// variables). Spans go through a bounded batch queue that drops rather
// than blocks, so a collector that is down or slow never holds a run.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of forge-lsp's spans.
const Name = "github.com/forge-lsp/forge-lsp"

// Limits of the exporter: spans wait in a queue of QueueSize and are
// dropped when it is full; one export gives up after ExportTimeout; at
// exit, spans still queued get at most ShutdownTimeout.
const (
	QueueSize       = 2048
	ExportTimeout   = 5 * time.Second
	ShutdownTimeout = 500 * time.Millisecond
)

// Options are Setup's choices.
type Options struct {
	// Enabled is the --otel flag: export even without an endpoint in the
	// environment (to the OTLP default, localhost:4318 or :4317).
	Enabled bool
	// Content is --otel-content: prompt and completion text on spans.
	// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (the GenAI
	// instrumentations' standard switch) turns it on too.
	Content bool
	// Service is the default service.name (OTEL_SERVICE_NAME wins).
	Service string
	// Env reads environment variables (nil: os.LookupEnv).
	Env func(string) (string, bool)
}

// Telemetry is the process's exporter; the zero value and nil are off.
type Telemetry struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	content bool
}

// Wanted reports whether the options or the environment ask for export.
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off.
func Wanted(o Options) bool {
	env := o.env()
	if v, _ := env("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return false
	}
	if v, _ := env("OTEL_TRACES_EXPORTER"); strings.EqualFold(strings.TrimSpace(v), "none") {
		return false
	}
	if o.Enabled {
		return true
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v, ok := env(k); ok && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

func (o Options) env() func(string) (string, bool) {
	if o.Env != nil {
		return o.Env
	}
	return os.LookupEnv
}

// Setup starts the exporter when Wanted, installs it and the W3C trace
// context propagator as the process's globals, and returns it; nil when
// export is off. The exporters read the standard OTEL_EXPORTER_OTLP_*
// variables themselves (endpoint, headers, protocol, timeout).
func Setup(ctx context.Context, o Options) (*Telemetry, error) {
	if !Wanted(o) {
		return nil, nil
	}
	env := o.env()
	proto, _ := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto, _ = env("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var client otlptrace.Client
	switch strings.TrimSpace(proto) {
	case "", "http/protobuf":
		client = otlptracehttp.NewClient(otlptracehttp.WithTimeout(ExportTimeout))
	case "grpc":
		client = otlptracegrpc.NewClient(otlptracegrpc.WithTimeout(ExportTimeout))
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported: use http/protobuf (the default) or grpc (docs/observability.md)", proto)
	}
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry exporter: %v", err)
	}
	service := o.Service
	if service == "" {
		service = "forge-lsp"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		res = resource.Default()
	}
	if envRes, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if m, err := resource.Merge(res, envRes); err == nil {
			res = m
		}
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(exp,
			sdktrace.WithMaxQueueSize(QueueSize),
			sdktrace.WithExportTimeout(ExportTimeout),
			sdktrace.WithBatchTimeout(time.Second),
		),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	// A collector that cannot be reached is reported once per export by
	// the SDK's error handler; it never fails a run.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	content := o.Content
	if v, _ := env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"); strings.EqualFold(strings.TrimSpace(v), "true") {
		content = true
	}
	return &Telemetry{tp: tp, tracer: tp.Tracer(Name), content: content}, nil
}

// Tracer is the tracer spans start from; a no-op tracer when t is nil.
func (t *Telemetry) Tracer() trace.Tracer {
	if t == nil {
		return trace.NewNoopTracerProvider().Tracer(Name)
	}
	return t.tracer
}

// Content reports whether prompt and completion text may be recorded.
func (t *Telemetry) Content() bool { return t != nil && t.content }

// Shutdown exports the spans still queued, waiting at most
// ShutdownTimeout: an unreachable collector delays exit by no more.
func (t *Telemetry) Shutdown() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = err
	}
}

// Inject writes the span context of ctx into h as a W3C traceparent
// (nothing when export is off).
func Inject(ctx context.Context, h http.Header) {
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
}

// Extract reads a W3C traceparent from h into ctx.
func Extract(ctx context.Context, h http.Header) context.Context {
	return otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(h))
}
