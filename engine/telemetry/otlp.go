package telemetry

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpClient sends OTLP trace exports over HTTP (http/protobuf) or gRPC
// (a unary call over HTTP/2, h2c for http:// endpoints). It stands in for
// the OpenTelemetry exporters' own clients, which link gRPC and its
// generated services into every forge-lsp process: their package
// initialisation and the larger binary cost about 3 ms of CPU time at the
// start of every command, a quarter of a small check
// (docs/observability.md names the variables it reads).
type otlpClient struct {
	grpc    bool
	url     string
	headers [][2]string
	timeout time.Duration
	hc      *http.Client
}

// grpcExport is the OTLP trace service's Export method.
const grpcExport = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// newOTLPClient reads the standard OTEL_EXPORTER_OTLP_* variables: the
// endpoint (traces URL as is, or the base URL plus /v1/traces for HTTP),
// headers, timeout in milliseconds and, for gRPC endpoints given without a
// scheme, INSECURE.
func newOTLPClient(grpc bool, env func(string) (string, bool)) (*otlpClient, error) {
	get := func(k string) string {
		if v, ok := env("OTEL_EXPORTER_OTLP_TRACES_" + k); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		v, _ := env("OTEL_EXPORTER_OTLP_" + k)
		return strings.TrimSpace(v)
	}
	c := &otlpClient{grpc: grpc, timeout: ExportTimeout}
	traces, _ := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	traces = strings.TrimSpace(traces)
	base, _ := env("OTEL_EXPORTER_OTLP_ENDPOINT")
	base = strings.TrimSpace(base)
	switch {
	case grpc:
		ep := traces
		if ep == "" {
			ep = base
		}
		if ep == "" {
			ep = "http://localhost:4317"
		}
		if !strings.Contains(ep, "://") {
			scheme := "https://"
			if strings.EqualFold(get("INSECURE"), "true") {
				scheme = "http://"
			}
			ep = scheme + ep
		}
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("OTLP endpoint %q: not a URL or host:port", ep)
		}
		c.url = u.Scheme + "://" + u.Host + grpcExport
		tr := &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
		tr.Protocols = new(http.Protocols)
		if u.Scheme == "http" {
			tr.Protocols.SetUnencryptedHTTP2(true)
		} else {
			tr.Protocols.SetHTTP2(true)
		}
		c.hc = &http.Client{Transport: tr}
	default:
		switch {
		case traces != "":
			c.url = traces
		case base != "":
			c.url = strings.TrimSuffix(base, "/") + "/v1/traces"
		default:
			c.url = "http://localhost:4318/v1/traces"
		}
		if u, err := url.Parse(c.url); err != nil || u.Host == "" {
			return nil, fmt.Errorf("OTLP endpoint %q: not a URL", c.url)
		}
		c.hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	}
	if h := get("HEADERS"); h != "" {
		for _, kv := range strings.Split(h, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			k, err1 := url.PathUnescape(strings.TrimSpace(k))
			v, err2 := url.PathUnescape(strings.TrimSpace(v))
			if err1 == nil && err2 == nil && k != "" {
				c.headers = append(c.headers, [2]string{k, v})
			}
		}
	}
	if t := get("TIMEOUT"); t != "" {
		if ms, err := strconv.Atoi(t); err == nil && ms > 0 {
			c.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return c, nil
}

func (c *otlpClient) Start(context.Context) error { return nil }

func (c *otlpClient) Stop(context.Context) error {
	c.hc.CloseIdleConnections()
	return nil
}

// UploadTraces sends one ExportTraceServiceRequest: field 1 repeated
// ResourceSpans, encoded here so that the collector service's generated
// package (and gRPC with it) stays out of the binary.
func (c *otlpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	var body []byte
	if c.grpc {
		body = make([]byte, 5) // uncompressed flag, message length
	}
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return err
		}
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, b)
	}
	if c.grpc {
		binary.BigEndian.PutUint32(body[1:5], uint32(len(body)-5))
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range c.headers {
		req.Header.Set(h[0], h[1])
	}
	if c.grpc {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("OTLP export to %s: %s", c.url, resp.Status)
	}
	if c.grpc {
		status := resp.Trailer.Get("Grpc-Status")
		if status == "" {
			status = resp.Header.Get("Grpc-Status")
		}
		if status != "0" {
			msg := resp.Trailer.Get("Grpc-Message")
			if msg == "" {
				msg = resp.Header.Get("Grpc-Message")
			}
			return fmt.Errorf("OTLP export to %s: gRPC status %q %s", c.url, status, msg)
		}
	}
	return nil
}
