package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

func busy(status int, after string) gatewaytest.Reply {
	return gatewaytest.Reply{Status: status, RetryAfter: after, RawBody: `{"error":{"message":"slow down"}}`}
}

func chat(t *testing.T, c *gateway.Client) (*gateway.Response, error) {
	t.Helper()
	return c.Complete(context.Background(), &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "hi"}}})
}

// 429 and 503 are retried as Retry-After asks (before: the run failed at
// once, and 429 was not even marked retryable).
func TestRetriesHonourRetryAfter(t *testing.T) {
	srv := gatewaytest.New(t, "k")
	srv.Enqueue(busy(429, "0"), busy(503, "0"), gatewaytest.Text("finally"))
	resp, err := chat(t, gateway.New(srv.Config()))
	if err != nil || resp.Content != "finally" {
		t.Fatalf("got %+v, %v", resp, err)
	}
	if n := len(srv.ChatRequests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// The retries are bounded: after Retries of them the error is returned,
// marked retryable.
func TestRetriesAreBounded(t *testing.T) {
	srv := gatewaytest.New(t, "k")
	srv.Enqueue(busy(429, "0"), busy(429, "0"), busy(429, "0"), busy(429, "0"), gatewaytest.Text("never"))
	_, err := chat(t, gateway.New(srv.Config()))
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Status != 429 || !ge.Retryable() || !strings.Contains(ge.Msg, "(after 3 retries") {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.ChatRequests()); n != 1+gateway.DefaultRetries {
		t.Errorf("%d requests, want %d", n, 1+gateway.DefaultRetries)
	}
}

// A Retry-After beyond the total wait cap fails at once instead of
// sleeping; Retries < 0 turns retrying off.
func TestRetryWaitIsCapped(t *testing.T) {
	srv := gatewaytest.New(t, "k")
	srv.Enqueue(busy(503, "3600"), gatewaytest.Text("never"))
	cfg := srv.Config()
	// A wait that honoured the cap would take 20 s, one that honoured the
	// header an hour: well under 10 s means it did not wait (a bound a busy
	// machine does not reach).
	cfg.MaxRetryWait = 20 * time.Second
	start := time.Now()
	_, err := chat(t, gateway.New(cfg))
	if err == nil || time.Since(start) > 10*time.Second || len(srv.ChatRequests()) != 1 {
		t.Fatalf("err %v after %v, %d requests", err, time.Since(start), len(srv.ChatRequests()))
	}
	srv2 := gatewaytest.New(t, "k")
	srv2.Enqueue(busy(429, "0"), gatewaytest.Text("never"))
	cfg = srv2.Config()
	cfg.Retries = -1
	if _, err := chat(t, gateway.New(cfg)); err == nil || len(srv2.ChatRequests()) != 1 {
		t.Fatalf("Retries -1: %v, %d requests", err, len(srv2.ChatRequests()))
	}
	// A cancelled context stops the wait.
	srv3 := gatewaytest.New(t, "k")
	srv3.Enqueue(busy(429, "30"), gatewaytest.Text("never"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = gateway.New(srv3.Config()).Complete(ctx, &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: "hi"}}})
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Kind != gateway.KindCancelled || time.Since(start) > 15*time.Second {
		t.Fatalf("cancelled wait: %v after %v", err, time.Since(start))
	}
}

// A recording keeps only the answer the run went on with, so its replay
// neither waits nor retries.
func TestRecordingSkipsRetriedAnswers(t *testing.T) {
	srv := gatewaytest.New(t, "k")
	srv.Enqueue(busy(429, "0"), gatewaytest.Text("ok"))
	path := t.TempDir() + "/c.jsonl"
	c, err := gateway.NewRecording(srv.Config(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chat(t, c); err != nil {
		t.Fatal(err)
	}
	c.Close()
	r, err := gateway.NewReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := chat(t, r); err != nil || resp.Content != "ok" {
		t.Fatalf("replay: %+v %v", resp, err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("replay left exchanges: %v", err)
	}
}
