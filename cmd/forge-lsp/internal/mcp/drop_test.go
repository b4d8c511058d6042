package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawSession is an MCP session over plain HTTP requests, so a test can
// drop a connection the way a crashed client does.
type rawSession struct {
	t        testing.TB
	endpoint string
	id       string
	client   *http.Client
}

const rawProtocol = "2025-06-18"

func (s *rawSession) post(ctx context.Context, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer bearer-secret-token")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", rawProtocol)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	return s.client.Do(req)
}

// openRaw initializes a session.
func openRaw(t testing.TB, endpoint string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, endpoint: endpoint, client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	resp, err := s.post(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+rawProtocol+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.id = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || s.id == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, s.id)
	}
	resp, err = s.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return s
}

// startCall posts a run_prompt call and returns once the response has
// begun; cancel drops the connection.
func (s *rawSession) startCall(id int, prompt string) (cancel func()) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		resp, err := s.post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_prompt","arguments":{"prompt":%q,"args":"q"}}}`, id, prompt))
		if err == nil {
			_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
			resp.Body.Close()
		}
	}()
	return cancel
}

func (s *rawSession) delete(ctx context.Context) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, s.endpoint, nil)
	req.Header.Set("Authorization", "Bearer bearer-secret-token")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", rawProtocol)
	return s.client.Do(req)
}

// busySlots is how many run slots are taken.
func (f *fixture) busySlots() int { return len(f.srv.runs.slots) }

// TestHTTPDroppedClientFreesSlot: a call whose connection drops cancels
// its run and frees its slot, and DELETE of a session with a call in
// flight is answered and frees that slot too; the next client is served.
func TestHTTPDroppedClientFreesSlot(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt, "echo.md": echoPrompt}, "max_concurrent_runs = 2\nadmission_timeout = \"100ms\"")
	f.block("late")
	h, err := f.srv.HTTPHandler("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	// A failure leaves calls blocked in the gateway: release them first.
	defer f.unblock()

	dropped := openRaw(t, hs.URL+"/mcp")
	drop := dropped.startCall(2, "ask")
	deleted := openRaw(t, hs.URL+"/mcp")
	deleted.startCall(2, "ask")
	for i := 0; i < 2; i++ {
		<-f.started
	}
	if n := f.busySlots(); n != 2 {
		t.Fatalf("%d slots busy, want 2", n)
	}
	began := time.Now()
	drop()
	waitFor(t, "the dropped call's slot", func() bool { return f.busySlots() == 1 })
	t.Logf("a dropped call freed its slot in %v", time.Since(began))

	began = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := deleted.delete(ctx)
	if err != nil {
		t.Fatalf("DELETE /mcp with a call in flight: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	waitFor(t, "the deleted session's slot", func() bool { return f.busySlots() == 0 })
	t.Logf("DELETE answered and freed its slot in %v", time.Since(began))

	// Both slots serve the next client.
	next := openRaw(t, hs.URL+"/mcp")
	resp, err = next.post(context.Background(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_prompt","arguments":{"prompt":"echo","args":"next"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `NEXT`) {
		t.Fatalf("the next client: %s", b)
	}
}
