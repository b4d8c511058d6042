package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

const gatewayKey = "gw-secret-key-0123456789"

// Prompts the tests serve.
const echoPrompt = "---\nname: echo\ndescription: Return the input upper-cased with no model call\npromptforge: 1\n---\n\n# Echo\n\n## Shout\n\n```lua\nreturn string.upper(args)\n```\n"

const askPrompt = "---\nname: ask\ndescription: Answer a question with one model call\npromptforge: 1\n---\n\n# Ask\n\n```lua\nmodels.default(\"m\", \"a general assistant model\")\n```\n\n## Answer\n\nReply to: {{ args }}\n"

const summarizePrompt = "---\nname: summarize\ndescription: Summarize a document from the store into a written report\npromptforge: 1\ninput:\n  path: in/doc.md\n  description: the document\noutput:\n  path: out/report.md\n  description: the report\n---\n\n# Summarize\n\n## Write\n\n```lua\nstore.write(\"out/report.md\", \"REPORT: \" .. store.read(\"in/doc.md\"))\nreturn \"done\"\n```\n"

// fixture is a prompts folder, a scripted gateway and a server over them.
type fixture struct {
	t    testing.TB
	dir  string
	gw   *gatewaytest.Server
	srv  *Server
	logs *syncBuffer
	// env is the user's environment: the gateway, its key and the bearer.
	env LookupFunc
	// release unblocks the gateway when block is used.
	release chan struct{}
	started chan struct{}
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

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newFixture serves prompts (file name -> text) with extra [server]
// lines.
func newFixture(t testing.TB, prompts map[string]string, server string) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), release: make(chan struct{}), started: make(chan struct{}, 64)}
	f.gw = gatewaytest.New(t, gatewayKey)
	t.Cleanup(func() {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
	})
	for name, text := range prompts {
		writeFile(t, filepath.Join(f.dir, "prompts", name), text)
	}
	toml := "[server]\napi_key = \"${PROMPTFORGE_MCP_SERVER_API_KEY}\"\n" + server + "\n[paths]\nprompts = \"" + filepath.ToSlash(filepath.Join(f.dir, "prompts")) + "\"\n\n[catalog]\ninclude = [\"**/*.md\"]\n"
	writeFile(t, filepath.Join(f.dir, "prompts.toml"), toml)
	f.env = envOf(gateway.EnvURL, f.gw.BaseURL(), gateway.EnvKey, gatewayKey, EnvAPIKey, "bearer-secret-token")
	cfg, err := LoadConfig(filepath.Join(f.dir, "prompts.toml"), f.env)
	if err != nil {
		t.Fatal(err)
	}
	f.logs = &syncBuffer{}
	srv, err := newServerWithLog(cfg, f.env, f.logs)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return f
}

func noEnv(string) (string, bool) { return "", false }

// envOf is an environment of the given name, value pairs.
func envOf(kv ...string) LookupFunc {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func newServerWithLog(cfg *Config, env LookupFunc, w logWriter) (*Server, error) {
	return NewServer(cfg, Options{Env: gateway.LookupFunc(env), Log: w})
}

// block makes every chat completion wait until release is closed (or the
// engine gives up on the request), signalling started as each arrives.
func (f *fixture) block(reply string) {
	f.gw.Script = func(*gateway.Request) gatewaytest.Reply {
		f.started <- struct{}{}
		<-f.release
		return gatewaytest.Text(reply)
	}
}

func (f *fixture) unblock() { close(f.release) }

// connect opens an in-memory client session.
func (f *fixture) connect(opts *sdk.ClientOptions) *sdk.ClientSession {
	f.t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := f.srv.MCP().Connect(ctx, st, nil); err != nil {
		f.t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured content into out (when
// non-nil); it returns the result's text.
func call(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) (*sdk.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if out != nil {
		if res.StructuredContent == nil {
			t.Fatalf("%s: no structured content; text %q", name, text.String())
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return res, text.String()
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
