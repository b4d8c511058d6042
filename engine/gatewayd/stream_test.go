package gatewayd

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// streamGateway serves g on loopback and opens a streamed chat request
// through it.
func streamGateway(t *testing.T, g *Gateway, ctx context.Context, body string) *http.Response {
	t.Helper()
	s := httptest.NewServer(g)
	t.Cleanup(s.Close)
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+serverKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const streamFast = `{"model":"fast","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

// TestStreamRelayed: an endpoint's event stream reaches the caller event
// by event (the endpoint sends its second chunk only after the caller has
// read the first), byte for byte but for the model name.
func TestStreamRelayed(t *testing.T) {
	first := "data: {\"id\":\"s1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
	rest := ": keep-alive comment\n\n" +
		"data:{\"id\":\"s1\",\"model\":\"gpt-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n" +
		"data: {\"id\":\"s1\",\"model\":\"gpt-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n" +
		"data: [DONE]\n\n"
	readFirst := make(chan struct{})
	var sent string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sent = string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-readFirst:
		case <-time.After(10 * time.Second):
			return
		}
		io.WriteString(w, rest)
	}))
	defer backend.Close()
	g := open(t, fileFor(backend.URL, ""))
	resp := streamGateway(t, g, context.Background(), streamFast)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	var got strings.Builder
	for !strings.HasSuffix(got.String(), "\n\n") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got.String(), err)
		}
		got.WriteString(line)
	}
	close(readFirst)
	tail, _ := io.ReadAll(br)
	got.Write(tail)
	want := strings.ReplaceAll(first+rest, `"model":"gpt-mini"`, `"model":"fast"`)
	if got.String() != want {
		t.Errorf("caller got\n%q\nwant\n%q", got.String(), want)
	}
	if !strings.Contains(sent, `"model":"gpt-mini","stream":true,"stream_options":{"include_usage":true}`) {
		t.Errorf("endpoint got %s", sent)
	}
}

// chunks reads an event stream's data payloads.
func chunks(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestStreamConverted: an endpoint that answers a streamed request with a
// whole completion is converted to chunks: role and content, tool calls
// with their index, the finish_reason, usage only when asked, [DONE].
func TestStreamConverted(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c9","object":"chat.completion","created":7,"model":"gpt-mini","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"let me look","reasoning_content":"think","tool_calls":[{"id":"a","type":"function","function":{"name":"search","arguments":"{\"q\":1}"}},{"id":"b","type":"function","function":{"name":"read","arguments":"{}"}}]}}],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}}`)
	}))
	defer backend.Close()
	g := open(t, fileFor(backend.URL, ""))
	for _, usage := range []bool{true, false} {
		body := streamFast
		if !usage {
			body = strings.Replace(body, `"include_usage":true`, `"include_usage":false`, 1)
		}
		resp := streamGateway(t, g, context.Background(), body)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
			t.Fatalf("%d %s", resp.StatusCode, ct)
		}
		cs := chunks(t, resp.Body)
		if len(cs) == 0 || cs[len(cs)-1] != "[DONE]" {
			t.Fatalf("no [DONE]: %q", cs)
		}
		type chunk struct {
			ID, Object, Model string
			Created           int64
			Choices           []struct {
				Index        int
				FinishReason *string `json:"finish_reason"`
				Delta        struct {
					Role, Content    string
					ReasoningContent string `json:"reasoning_content"`
					ToolCalls        []struct {
						Index    *int
						ID, Type string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
			Usage *struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		var parsed []chunk
		for _, c := range cs[:len(cs)-1] {
			var ch chunk
			if err := json.Unmarshal([]byte(c), &ch); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			if ch.ID != "c9" || ch.Object != "chat.completion.chunk" || ch.Model != "fast" || ch.Created != 7 {
				t.Errorf("chunk head %+v", ch)
			}
			parsed = append(parsed, ch)
		}
		want := 2
		if usage {
			want = 3
		}
		if len(parsed) != want {
			t.Fatalf("usage=%v: %d chunks: %q", usage, len(parsed), cs)
		}
		d := parsed[0].Choices[0].Delta
		if d.Role != "assistant" || d.Content != "let me look" || d.ReasoningContent != "think" || len(d.ToolCalls) != 2 ||
			*d.ToolCalls[1].Index != 1 || d.ToolCalls[1].Function.Name != "read" || d.ToolCalls[0].Function.Arguments != `{"q":1}` {
			t.Errorf("first delta %+v", d)
		}
		if parsed[0].Choices[0].FinishReason != nil || *parsed[1].Choices[0].FinishReason != "tool_calls" {
			t.Errorf("finish reasons %+v", parsed)
		}
		if usage && (len(parsed[2].Choices) != 0 || parsed[2].Usage == nil || parsed[2].Usage.TotalTokens != 10) {
			t.Errorf("usage chunk %+v", parsed[2])
		}
	}
}

// TestStreamBounded: an endpoint stream with an event over the limit, or
// one that never ends, is cut with an error event the SDKs raise.
func TestStreamBounded(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"model\":\"m\",\"choices\":[]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	defer backend.Close()
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[],\"x\":\""+strings.Repeat("a", MaxStreamEvent)+"\"}\n\n")
	}))
	defer big.Close()
	for name, tc := range map[string]struct {
		url, code string
		timeout   time.Duration
	}{"endless": {backend.URL, "upstream_timeout", 300 * time.Millisecond}, "oversized": {big.URL, "upstream_protocol", time.Minute}} {
		c, err := Load(write(t, t.TempDir(), "gw.toml", fileFor(tc.url, "")), noEnv)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := New(c, Options{Timeout: tc.timeout})
		resp := streamGateway(t, g, context.Background(), streamFast)
		cs := chunks(t, resp.Body)
		last := cs[len(cs)-1]
		var env struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal([]byte(last), &env) != nil || env.Error.Code != tc.code {
			t.Errorf("%s: last event %q, want error %s", name, last, tc.code)
		}
	}
}

// TestStreamCallerGone: when the caller drops a stream, the endpoint's
// request is cancelled at once.
func TestStreamCallerGone(t *testing.T) {
	cancelled := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; ; i++ {
			if _, err := io.WriteString(w, "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n"); err != nil {
				break
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				close(cancelled)
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	defer backend.Close()
	g := open(t, fileFor(backend.URL, ""))
	ctx, cancel := context.WithCancel(context.Background())
	resp := streamGateway(t, g, ctx, streamFast)
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the endpoint's stream was not cancelled")
	}
}

// TestStreamField: "stream" must be a boolean.
func TestStreamField(t *testing.T) {
	b := newBackend(t)
	g := open(t, fileFor(b.URL, ""))
	code, out, _ := call(t, g, "POST", "/v1/chat/completions", serverKey, `{"model":"fast","stream":"yes","messages":[{"role":"user","content":"x"}]}`)
	if _, c, msg := errorOf(out); code != 400 || c != "malformed_request" || !strings.Contains(msg, "stream must be true or false") {
		t.Fatalf("%d %v", code, out)
	}
}

// BenchmarkStreamTTFB: time to the first byte of a streamed answer from a
// scripted streaming endpoint, straight and through the served gateway,
// alternately in the same run; reports both p50s and what the gateway adds
// (docs/gateway.md#streaming: within 5 ms).
func BenchmarkStreamTTFB(b *testing.B) {
	chunk := "data: {\"id\":\"s\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word \"},\"finish_reason\":null}]}\n\n"
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 8 {
			io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer backend.Close()
	c, err := Load(write(b, b.TempDir(), "gw.toml", fileFor(backend.URL, "")), noEnv)
	if err != nil {
		b.Fatal(err)
	}
	g, _ := New(c, Options{})
	served := httptest.NewServer(g)
	defer served.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	ttfb := func(url, key, model string) time.Duration {
		body := `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var one [1]byte
		if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return d
	}
	for range 20 {
		ttfb(backend.URL, backendKey, "gpt-mini")
		ttfb(served.URL, serverKey, "fast")
	}
	var direct, via []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		direct = append(direct, ttfb(backend.URL, backendKey, "gpt-mini"))
		via = append(via, ttfb(served.URL, serverKey, "fast"))
	}
	b.StopTimer()
	p50 := func(x []time.Duration) float64 {
		slices.Sort(x)
		return float64(x[len(x)/2].Nanoseconds()) / 1e3
	}
	d, v := p50(direct), p50(via)
	b.ReportMetric(d, "direct-ttfb-p50-µs")
	b.ReportMetric(v, "served-ttfb-p50-µs")
	b.ReportMetric(v-d, "added-ttfb-µs")
	b.ReportMetric(0, "ns/op")
}
