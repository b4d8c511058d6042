// Package telemetrytest is an in-process OTLP/HTTP trace receiver for
// tests: it keeps the spans it is sent, with their service names, and
// answers helpers that look them up.
package telemetrytest

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector receives OTLP/HTTP trace exports on URL + /v1/traces.
type Collector struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	svc   map[string]string // span id -> service.name
	got   chan struct{}     // signalled on every export
}

// New starts a collector, closed when the test ends.
func New(t testing.TB) *Collector {
	c := &Collector{svc: map[string]string{}, got: make(chan struct{}, 1)}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			w.WriteHeader(400)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			svc := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					svc = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					c.spans = append(c.spans, s)
					c.svc[hex.EncodeToString(s.SpanId)] = svc
				}
			}
		}
		c.mu.Unlock()
		select {
		case c.got <- struct{}{}:
		default:
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ = proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	t.Cleanup(c.Close)
	return c
}

// Exported is signalled (without blocking the receiver) after each export
// request; a test waits on it instead of sleeping.
func (c *Collector) Exported() <-chan struct{} { return c.got }

// Spans are the spans received so far.
func (c *Collector) Spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// Service is the service.name of the resource span s came with.
func (c *Collector) Service(s *tracepb.Span) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.svc[hex.EncodeToString(s.SpanId)]
}

// Attr is span s's attribute key as text: a string, the first element of
// an array, or an integer in decimal; "" when absent.
func Attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			v := a.GetValue()
			switch {
			case v.GetStringValue() != "":
				return v.GetStringValue()
			case v.GetArrayValue() != nil && len(v.GetArrayValue().Values) > 0:
				return v.GetArrayValue().Values[0].GetStringValue()
			default:
				return strings.TrimSpace(strings.TrimPrefix(v.String(), "int_value:"))
			}
		}
	}
	return ""
}

// Names lists spans as name/kind, for failure messages.
func Names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+"/"+s.Kind.String())
	}
	return out
}

// ByName is the first span called name, or nil.
func ByName(spans []*tracepb.Span, name string) *tracepb.Span {
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// RunTree checks the span tree of one run: a span called run, a span
// called section whose parent it is, and a client span called chat under
// the section, all in the run's trace, the chat span with the GenAI
// operation and model; it returns the run span, or an error saying what
// is missing.
func RunTree(spans []*tracepb.Span, run, section, chat string) (*tracepb.Span, error) {
	r, s := ByName(spans, run), ByName(spans, section)
	if r == nil || s == nil {
		return nil, fmt.Errorf("no %q and %q spans in %v", run, section, Names(spans))
	}
	var c *tracepb.Span
	for _, x := range spans {
		if x.Name == chat && x.Kind == tracepb.Span_SPAN_KIND_CLIENT && bytes.Equal(x.TraceId, r.TraceId) {
			c = x
		}
	}
	switch {
	case c == nil:
		return nil, fmt.Errorf("no client span %q in the run's trace: %v", chat, Names(spans))
	case !bytes.Equal(s.TraceId, r.TraceId):
		return nil, fmt.Errorf("span %q is in another trace than %q", section, run)
	case !bytes.Equal(s.ParentSpanId, r.SpanId) || !bytes.Equal(c.ParentSpanId, s.SpanId):
		return nil, fmt.Errorf("parents: %q under %x (want %x), %q under %x (want %x)", section, s.ParentSpanId, r.SpanId, chat, c.ParentSpanId, s.SpanId)
	case len(r.ParentSpanId) != 0:
		return nil, fmt.Errorf("run span %q has a parent", run)
	case Attr(c, "gen_ai.operation.name") != "chat" || Attr(c, "gen_ai.request.model") == "":
		return nil, fmt.Errorf("chat span attributes %v", c.Attributes)
	}
	return r, nil
}

// Wait returns the spans received once done accepts them, or what came
// when the deadline (a failure bound, not a pause) passes first.
func (c *Collector) Wait(within time.Duration, done func([]*tracepb.Span) bool) []*tracepb.Span {
	timeout := time.NewTimer(within)
	defer timeout.Stop()
	for {
		spans := c.Spans()
		if done(spans) {
			return spans
		}
		select {
		case <-c.got:
		case <-timeout.C:
			return c.Spans()
		}
	}
}
