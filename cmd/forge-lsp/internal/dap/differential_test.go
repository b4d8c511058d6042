package dap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
)

// TestDebuggerChangesNothing runs every shipped example and upstream
// prompt twice from one recording: replayed without the debugger, and
// under it with nothing to stop at. The debugger's tape, pinned clock and
// reply stops must change nothing: the same result or the same error.
func TestDebuggerChangesNothing(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	var files []string
	for _, g := range []string{"examples/*.md", "testdata/upstream/prompts/*.md", "testdata/upstream/core-tests/*/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d prompts", len(files))
	}
	now := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	srv := gatewaytest.New(t, "k")
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		return gatewaytest.Text("noted: " + strings.ToUpper(firstWords(gatewaytest.LastUserContent(req))))
	}
	compared, failing := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if session.CheckPrompt(f, src) != nil {
			continue
		}
		name, _ := filepath.Rel(root, f)
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			prog := filepath.Join(dir, filepath.Base(f))
			writeFile(t, prog, string(src))
			cas := filepath.Join(dir, "c.jsonl")
			opts := session.Options{Path: prog, Source: src, Input: "a test input", Execution: execution, Now: clock, ToolsDir: dir}
			rec := opts
			rec.Gateway, rec.Env = session.Gateway{Record: cas}, gatewayEnv(srv.BaseURL())
			want, wantErr := runOnce(rec)
			if _, err := os.Stat(cas); err != nil {
				t.Logf("no recording: %v", wantErr)
				return
			}
			rep := opts
			rep.Gateway, rep.Env = session.Gateway{Replay: cas}, func(string) (string, bool) { return "", false }
			plain, plainErr := runOnce(rep)
			if plain != want || (plainErr == nil) != (wantErr == nil) {
				t.Errorf("the recording does not replay on its own (%q, %v; recorded %q, %v)", plain, plainErr, want, wantErr)
				return
			}
			c := start(t, Options{Now: clock})
			c.launch(LaunchArgs{Program: prog, Input: "a test input", Replay: cas, Execution: execution}, nil, nil)
			out, code := c.finish()
			if plainErr != nil {
				failing++
				msg := run.AsRunError(plainErr).Located(prog) + "\n"
				if code == 0 || out != msg {
					t.Errorf("replayed alone it failed with %q; under the debugger: %d %q", msg, code, out)
				}
			} else if code != 0 || out != strings.TrimSuffix(plain, "\n")+"\n" {
				t.Errorf("replayed alone: %q; under the debugger: %d %q", plain, code, out)
			}
			compared++
		})
	}
	t.Logf("%d prompts compared (%d of them failing the same way)", compared, failing)
	if compared < 15 {
		t.Errorf("only %d prompts could be compared", compared)
	}
}

func runOnce(o session.Options) (string, error) {
	s, err := session.Open(o)
	if err != nil {
		return "", err
	}
	res, err := s.Run(context.Background())
	cerr := s.Close()
	if err == nil {
		err = cerr
	}
	return res, err
}

func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 4 {
		f = f[:4]
	}
	return strings.Join(f, " ")
}
