package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// plainExamplesBackend is the examples' scripted model server speaking as
// a plain OpenAI-compatible server: its /v1/models has no descriptions.
// It also returns a scripted Brave search API for [tools.web_search].
func plainExamplesBackend(t *testing.T) (*gatewaytest.Server, *httptest.Server) {
	srv := examplesGateway(t)
	srv.Plain = true
	srv.Search = nil
	brave := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "brave-key" {
			w.WriteHeader(401)
			return
		}
		w.Write([]byte(`{"web":{"results":[{"title":"Why is the sky blue?","url":"https://example.org/sky?utm_source=feed","description":"Rayleigh scattering: air molecules scatter shorter wavelengths (blue) far more than longer ones."}]}}`))
	}))
	t.Cleanup(brave.Close)
	return srv, brave
}

// writeGatewayFile describes the backend's two models; the keys come from
// the file's .env.
func writeGatewayFile(t *testing.T, dir string, srv *gatewaytest.Server, brave *httptest.Server) string {
	t.Helper()
	path := filepath.Join(dir, "gateway.toml")
	text := `[server]
bind = "127.0.0.1:0"
api_key = "${GW_KEY}"

[[endpoint]]
id = "plain"
protocol = "openai"
base_url = "` + srv.BaseURL() + `"
api_key = "${EXAMPLES_KEY}"

[[model]]
name = "analyst"
description = "A model suited for careful analysis, coding, and general assistance"
context = 32768
upstream = "analyst-1"
endpoints = ["plain"]

[[model]]
name = "writer"
description = "A careful general-purpose writing model for prose"
context = 32768
upstream = "writer-1"
endpoints = ["plain"]

[tools.web_search]
provider = "brave"
api_key = "${BRAVE_KEY}"
base_url = "` + brave.URL + `"
`
	os.WriteFile(path, []byte(text), 0o600)
	os.WriteFile(filepath.Join(dir, "gateway.env"), []byte("GW_KEY=served-key\nEXAMPLES_KEY="+srv.Key+"\nBRAVE_KEY=brave-key\n"), 0o600)
	return path
}

// copyExamples copies the shipped examples without their cassettes.
func copyExamples(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "..", "examples")
	dst := t.TempDir()
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
	}
	return dst
}

// TestGatewayConfigEndToEnd: against a plain OpenAI-compatible backend the
// examples fail with the catalog message; with --gateway-config they
// record (in-process, no second process) and then replay offline, and
// `run` records and replays the research prompt.
func TestGatewayConfigEndToEnd(t *testing.T) {
	srv, brave := plainExamplesBackend(t)
	file := writeGatewayFile(t, t.TempDir(), srv, brave)
	dir := copyExamples(t)
	code, out, errs := testCLI(t, envOf(srv), "--record", dir)
	if code == 0 || !strings.Contains(out+errs, "does not describe its models") {
		t.Fatalf("plain backend without a file: %d\n%s%s", code, out, errs)
	}
	code, out, errs = testCLI(t, envOf(srv), "--record", "--gateway-config", file, dir)
	if code != 0 || !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Fatalf("record through --gateway-config: %d\n%s%s", code, out, errs)
	}
	// The backend saw the upstream names, never the file's.
	for _, r := range srv.ChatRequests() {
		if r.Model != "analyst-1" && r.Model != "writer-1" {
			t.Fatalf("backend got model %q", r.Model)
		}
	}
	code, out, errs = testCLI(t, envOf(nil), dir)
	if code != 0 || !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Fatalf("replay: %d\n%s%s", code, out, errs)
	}
	// The same through PROMPTFORGE_GATEWAY_CONFIG.
	env := func(k string) (string, bool) {
		if k == gateway.EnvConfig {
			return file, true
		}
		return "", false
	}
	if code, out, errs := testCLI(t, env, "--record", dir); code != 0 || !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Fatalf("record through %s: %d\n%s%s", gateway.EnvConfig, code, out, errs)
	}
	// run --gateway-config --record, then --replay.
	cassette := filepath.Join(t.TempDir(), "research.cassette")
	prompt := filepath.Join(dir, "research.md")
	code, live, errs := runCLI(t, "--gateway-config", file, "--record", cassette, prompt, "Why is the sky blue?")
	if code != 0 || !strings.Contains(live, "Rayleigh") {
		t.Fatalf("run --gateway-config: %d %q %s", code, live, errs)
	}
	rec, _ := os.ReadFile(cassette)
	if !strings.Contains(string(rec), `\"description\":\"A careful general-purpose writing model for prose\"`) || strings.Contains(string(rec), "brave-key") || strings.Contains(string(rec), srv.Key) {
		t.Fatalf("cassette lacks the file's catalog or holds a key:\n%.600s", rec)
	}
	if !strings.Contains(string(rec), `https://example.org/sky\"`) {
		t.Errorf("web search result not trimmed of its tracking parameter:\n%s", rec)
	}
	code, replayed, errs := runCLI(t, "--replay", cassette, prompt, "Why is the sky blue?")
	if code != 0 || replayed != live {
		t.Fatalf("replay: %d %q (live %q) %s", code, replayed, live, errs)
	}
	// A broken file is a usage error with its location.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[[modle]]\n"), 0o600)
	if code, _, errs := runCLI(t, "--gateway-config", bad, prompt, "x"); code == 0 || !strings.Contains(errs, "bad.toml:1:3: unknown key modle") {
		t.Fatalf("broken file: %d %s", code, errs)
	}
}

// TestGatewayServeEndToEnd: `forge-lsp gateway serve FILE` in front of the
// plain backend; the engine pointed at it records and replays the
// examples.
func TestGatewayServeEndToEnd(t *testing.T) {
	srv, brave := plainExamplesBackend(t)
	file := writeGatewayFile(t, t.TempDir(), srv, brave)
	addr, stop := serveForTest(t, file)
	defer stop()
	env := func(k string) (string, bool) {
		return map[string]string{gateway.EnvURL: "http://" + addr + "/v1", gateway.EnvKey: "served-key"}[k], k == gateway.EnvURL || k == gateway.EnvKey
	}
	dir := copyExamples(t)
	if code, out, errs := testCLI(t, env, "--record", dir); code != 0 || !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Fatalf("record through gateway serve: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := testCLI(t, envOf(nil), dir); code != 0 || !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Fatalf("replay: %d\n%s%s", code, out, errs)
	}
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
}

// serveForTest runs `gateway serve file` until stop.
func serveForTest(t testing.TB, file string) (addr string, stop func()) {
	return serveGateway(t, func(string) (string, bool) { return "", false }, "serve", file)
}

// serveGateway runs `forge-lsp gateway ARGS...` with env as its
// environment until stop, which fails t if the command exited with an
// error or logged a credential. stop may be called more than once.
func serveGateway(t testing.TB, env func(string) (string, bool), args ...string) (addr string, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- GatewayContext(ctx, args, env, &errb, &errb, func(a string) { ready <- a })
	}()
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("gateway serve exited %d: %s", code, errb.String())
	case <-time.After(60 * time.Second):
		t.Fatal("gateway serve did not start")
	}
	var once sync.Once
	return addr, func() {
		once.Do(func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("gateway serve exited %d: %s", code, errb.String())
			}
			if strings.Contains(errb.String(), "served-key") || strings.Contains(errb.String(), "brave-key") {
				t.Errorf("a credential reached the log:\n%s", errb.String())
			}
		})
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestGatewayServeUsage: the subcommand's argument errors.
func TestGatewayServeUsage(t *testing.T) {
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := GatewayContext(context.Background(), args, func(string) (string, bool) { return "", false }, &out, &errb, nil)
		return code, out.String() + errb.String()
	}
	noServer := filepath.Join(t.TempDir(), "g.toml")
	os.WriteFile(noServer, []byte("[[endpoint]]\nid = \"e\"\nprotocol = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key = \"\"\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "missing 'serve' subcommand"},
		{[]string{"serve"}, "provide --profile NAME or a gateway file"},
		{[]string{"serve", "a.toml", "--profile", "x"}, "not both"},
		{[]string{"serve", "a.toml", "b.toml"}, "unexpected argument"},
		{[]string{"serve", noServer}, "has no [server] table"},
		{[]string{"serve", "--profiles-dir", t.TempDir(), "--profile", "dev"}, `profile "dev" not found`},
		{[]string{"serve", "--profile", "../x"}, "path separators"},
	} {
		if code, out := run(c.args...); code != exitUsage || !strings.Contains(out, c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, code, out, c.want)
		}
	}
	if code, out := run("serve", "-h"); code != 0 || !strings.Contains(out, "usage: forge-lsp gateway serve") {
		t.Errorf("help: %d %q", code, out)
	}
}

// TestGatewayServeDrains: a request in flight when the signal comes
// still gets its answer, and the server then stops.
func TestGatewayServeDrains(t *testing.T) {
	srv, brave := plainExamplesBackend(t)
	srv.Latency = 300 * time.Millisecond
	srv.Enqueue(gatewaytest.Text("late but whole"))
	file := writeGatewayFile(t, t.TempDir(), srv, brave)
	addr, stop := serveForTest(t, file)
	type result struct {
		status int
		err    error
	}
	got := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions", strings.NewReader(`{"model":"writer","messages":[{"role":"user","content":"x"}]}`))
		req.Header.Set("Authorization", "Bearer served-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- result{0, err}
			return
		}
		resp.Body.Close()
		got <- result{resp.StatusCode, nil}
	}()
	for deadline := time.Now().Add(30 * time.Second); len(srv.ChatRequests()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the backend")
		}
	}
	stop()
	if r := <-got; r.err != nil || r.status != 200 {
		t.Fatalf("in-flight request: %d %v", r.status, r.err)
	}
	if _, err := http.Get("http://" + addr + "/health"); err == nil {
		t.Fatal("still serving after the signal")
	}
}
