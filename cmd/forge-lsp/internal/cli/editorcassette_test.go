package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/session"
)

var updateCassette = flag.Bool("update-editor-cassette", false, "re-record editors/testdata/model.cassette.jsonl against the test gateway")

// The editor suites replay editors/testdata/model.md's "## Greet" with
// the input "Ada" from a committed cassette, so each suite runs on its
// own (.ci/editors.sh). This test keeps the cassette in step with the
// engine: it replays it as `forge-lsp run --replay` does, and
// -update-editor-cassette records it again.
func TestEditorCassette(t *testing.T) {
	prompt := filepath.Join("..", "..", "..", "..", "editors", "testdata", "model.md")
	cassette := strings.TrimSuffix(prompt, ".md") + ".cassette.jsonl"
	if *updateCassette {
		src, err := os.ReadFile(prompt)
		if err != nil {
			t.Fatal(err)
		}
		srv := gatewaytest.New(t, "k")
		// The H1 prose is a model round too.
		srv.Enqueue(gatewaytest.Text("Hello, stranger."), gatewaytest.Text("Hello there, Ada!"))
		tmp := filepath.Join(t.TempDir(), "c.jsonl")
		s, err := session.Open(session.Options{Path: prompt, Source: src, Section: "## Greet", Input: "Ada",
			Gateway: session.Gateway{Record: tmp}, Env: envOf(srv)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(context.Background())
		if cerr := s.Close(); err != nil || cerr != nil || res != "Hello there, Ada!" {
			t.Fatalf("recording: %q %v %v", res, err, cerr)
		}
		data, err := os.ReadFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cassette, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code := runCmd(context.Background(), []string{"--replay", cassette, "--section", "## Greet", prompt, "Ada"}, strings.NewReader(""), &out, &errb)
	if code != 0 || out.String() != "Hello there, Ada!\n" {
		t.Fatalf("replaying %s: exit %d, %q %q; if the engine's requests changed, run go test ./cmd/forge-lsp/internal/cli -run TestEditorCassette -update-editor-cassette", cassette, code, out.String(), errb.String())
	}
}
