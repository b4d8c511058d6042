package gatewayd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPassThroughBytes: the backend receives the caller's body byte for
// byte (member order, spacing, escapes, numbers beyond float64) with only
// the model's value replaced, and the caller receives the backend's
// answer byte for byte with only its model replaced.
func TestPassThroughBytes(t *testing.T) {
	answer := "{ \"id\" : \"c1\",\n \"model\" :\"gpt-large\", \"z_first\": [1e400, -0.0, \"\\u00e9\\\"\"],\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"index\":0}] }"
	var got string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	defer backend.Close()
	g := open(t, fileFor(backend.URL, ""))
	in := "{\"temperature\":0.25 , \"model\"  :  \"d\\u0065ep\",\n\"messages\":[{\"content\":\"\\\"quoted\\\" \\\\\",\"role\":\"user\"}],\"seed\":9007199254740993,\"x\":{\"model\":\"inner\"}}"
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(in))
	req.Header.Set("Authorization", "Bearer "+serverKey)
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	wantSent := strings.Replace(in, `"d\u0065ep"`, `"gpt-large"`, 1)
	if got != wantSent {
		t.Errorf("backend got\n%s\nwant\n%s", got, wantSent)
	}
	wantBack := strings.Replace(answer, `"gpt-large"`, `"deep"`, 1)
	if rec.Body.String() != wantBack {
		t.Errorf("caller got\n%s\nwant\n%s", rec.Body, wantBack)
	}
	if n := rec.Header().Get("Content-Length"); n != fmt.Sprint(len(wantBack)) {
		t.Errorf("Content-Length %s, want %d", n, len(wantBack))
	}
}

// TestAnswerWithoutModel: an answer without "model" gets the caller's.
func TestAnswerWithoutModel(t *testing.T) {
	for _, answer := range []string{`{"choices":[{"index":0,"message":{}}]}`, ` { "choices" : [ ] } `} {
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, answer) }))
		g := open(t, fileFor(backend.URL, ""))
		code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast)
		backend.Close()
		if code != 200 || out["model"] != "fast" || out["choices"] == nil {
			t.Errorf("%s: %d %v", answer, code, out)
		}
	}
}

// TestRequestShape: what the chat route rejects without decoding the
// body, with the message that says why.
func TestRequestShape(t *testing.T) {
	b := newBackend(t)
	g := open(t, fileFor(b.URL, ""))
	for body, want := range map[string]string{
		`{"model":"fast","model":"deep","messages":[{"role":"user","content":"x"}]}`: "model appears twice",
		`{"model":"fast","messages":[{"role":"user","content":"x"}]`:                 "body must be a JSON object",
		`{"model":"fast","messages":[{"role":"user","content":"x"}]} x`:              "body must be a JSON object",
		`{"model":"fast","messages":[{"role":"user","content":"x}]}`:                 "body must be a JSON object",
		`{"model":"fast","messages":[{"role":"user","content":"x"]}]}`:               "body must be a JSON object",
		`{"model":"fast"}`:                                       "messages must be an array",
		`{"model":"fast","messages":{}}`:                         "messages must be an array",
		`{"model":"fast","messages":[1]}`:                        "messages[0] must be an object with a string role",
		`{"model":"fast","messages":[{"role":7,"content":"x"}]}`: "messages[0] must be an object with a string role",
		`{"model":3,"messages":[{"role":"user","content":"x"}]}`: "model must not be empty",
		`[]`: "body must be a JSON object",
		``:   "body must be a JSON object",
	} {
		code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, body)
		if _, c, msg := errorOf(out); code != 400 || c != "malformed_request" || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %s %q; want 400 %q", body, code, c, msg, want)
		}
	}
	if n := len(b.received()); n != 0 {
		t.Fatalf("a malformed request reached the backend %d times", n)
	}
}

// FuzzScan: on any text encoding/json accepts as an object, the scanner
// finds the same members with the same values.
func FuzzScan(f *testing.F) {
	f.Add(`{"a":1,"b":[{"c":"d\"}"}],"e":{"f":null}}`)
	f.Add(`{ "\u0061" : "x" , "b":true}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, text string) {
		b := []byte(text)
		var want map[string]json.RawMessage
		valid := json.Unmarshal(b, &want) == nil && want != nil
		got := map[string]string{}
		err := wholeObject(b, func(k []byte, v span) bool {
			got[string(k)] = string(b[v.start:v.end])
			return true
		})
		if !valid {
			return // the scanner may accept what the endpoint will reject
		}
		if err != nil {
			t.Fatalf("%q: scanner failed: %v", text, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %v, want %v", text, got, want)
		}
		for k, v := range want {
			if got[k] != string(v) {
				t.Fatalf("%q: member %q is %q, want %q", text, k, got[k], v)
			}
		}
	})
}

// countingBackend is a scripted endpoint that counts the connections it
// accepted.
func countingBackend(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s, &conns
}

const okAnswer = `{"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`

// TestPooledConnections: sequential requests reuse one connection to the
// endpoint; concurrent ones open at most one each and keep them.
func TestPooledConnections(t *testing.T) {
	backend, conns := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, okAnswer)
	})
	g := open(t, fileFor(backend.URL, ""))
	for i := 0; i < 20; i++ {
		if code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast); code != 200 {
			t.Fatalf("%d %v", code, out)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("20 sequential requests opened %d connections, want 1", n)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatFast))
				req.Header.Set("Authorization", "Bearer "+serverKey)
				rec := httptest.NewRecorder()
				g.ServeHTTP(rec, req)
				if rec.Code != 200 {
					t.Error(rec.Code, rec.Body)
				}
			}
		}()
	}
	wg.Wait()
	if n := conns.Load(); n > 5 {
		t.Fatalf("4 concurrent callers opened %d connections, want at most 5", n)
	}
}

// TestStaleConnectionRetried: when the endpoint closed the pooled
// connection while it rested, the request goes out again on a new one
// and the caller never sees the failure.
func TestStaleConnectionRetried(t *testing.T) {
	backend, conns := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, okAnswer)
	})
	g := open(t, fileFor(backend.URL, ""))
	for i := 0; i < 3; i++ {
		if code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, chatFast); code != 200 {
			t.Fatalf("request %d: %d %v", i, code, out)
		}
		backend.CloseClientConnections()
	}
	if n := conns.Load(); n != 3 {
		t.Fatalf("%d connections, want 3", n)
	}
}

// TestCallerGoneClosesUpstream: when the caller goes away, the
// endpoint's request is cancelled at once (its connection closed), not
// left to run to the end.
func TestCallerGoneClosesUpstream(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	backend, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server then watches for the close
		close(started)
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(30 * time.Second):
		}
	})
	g := open(t, fileFor(backend.URL, ""))
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatFast)).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+serverKey)
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		done <- rec.Code
	}()
	<-started
	cancel()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the endpoint's request was not cancelled")
	}
	if code := <-done; code != 502 {
		t.Fatalf("status %d", code)
	}
}
