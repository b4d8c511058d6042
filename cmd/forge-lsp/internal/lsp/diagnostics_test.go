package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

const brokenPrompt = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# Title\n\n## Main\n\n```lua\njump(\"## Nowhere\")\n```\n"

// TestDebounceCoalesces sends a burst of changes inside the debounce
// window: only the last version is analysed and published; stale work is
// cancelled rather than published late. The window is long (a second) so
// that a busy machine does not split the burst.
func TestDebounceCoalesces(t *testing.T) {
	c := startServer(t, options{Debounce: time.Second})
	c.initialize(nil)
	uri := "file:///burst.md"
	c.open(uri, tinyPrompt)
	_, idx := c.diagnosticsFor(uri, 1, 0)
	for v := int32(2); v <= 6; v++ {
		text := brokenPrompt
		if v == 6 {
			text = tinyPrompt
		}
		c.change(uri, v, text)
	}
	p, last := c.diagnosticsFor(uri, 6, idx+1)
	if strings.Contains(mustJSON(p.Diagnostics), "unknown-section") {
		t.Fatalf("version 6 (without the bad jump) has stale diagnostics: %s", mustJSON(p.Diagnostics))
	}
	// A later change goes through the same queue: by its publish, a stale
	// publish of an intermediate version would have arrived.
	c.change(uri, 7, tinyPrompt+"\n")
	_, end := c.diagnosticsFor(uri, 7, last+1)
	ns, _ := c.snapshot()
	for i := idx + 1; i < end; i++ {
		if ns[i].method == protocol.MethodTextDocumentPublishDiagnostics && i != last {
			t.Errorf("extra publish for an intermediate version: %s", ns[i].params)
		}
	}
}

// TestCloseClears checks the empty, version-stamped, non-null publish on
// close, and that other Markdown gets nothing at all.
func TestCloseClears(t *testing.T) {
	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	uri := "file:///broken.md"
	c.open(uri, brokenPrompt)
	p, idx := c.diagnosticsFor(uri, 1, 0)
	if len(p.Diagnostics) == 0 {
		t.Fatal("broken prompt: no diagnostics")
	}
	c.notify(protocol.MethodTextDocumentDidClose, map[string]any{"textDocument": map[string]any{"uri": uri}})
	n, _, ok := c.waitFor(idx+1, 30*time.Second, func(n note) bool { return n.method == protocol.MethodTextDocumentPublishDiagnostics })
	if !ok {
		t.Fatal("no publish on close")
	}
	if !strings.Contains(string(n.params), `"diagnostics":[]`) || !strings.Contains(string(n.params), `"version":1`) {
		t.Fatalf("close publish = %s, want an empty list with the version", n.params)
	}

	// Non-prompt Markdown, and a prompt becoming non-prompt.
	c.open("file:///readme.md", "# Readme\n\n```lua\njump(\"## x\")\n```\n")
	c.open("untitled:Untitled-1", brokenPrompt)
	up, _ := c.diagnosticsFor("untitled:Untitled-1", 1, 0)
	if len(up.Diagnostics) == 0 {
		t.Fatal("untitled prompt: no diagnostics")
	}
	var h *protocol.Hover
	c.mustCall(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": "untitled:Untitled-1"}, "position": map[string]any{"line": 11, "character": 8}}, &h)
	if h == nil || !strings.Contains(h.Contents.Value, "does not resolve") {
		t.Fatalf("hover in an untitled prompt: %+v", h)
	}
	c.change("untitled:Untitled-1", 2, "# Just notes now\n")
	p2, _ := c.diagnosticsFor("untitled:Untitled-1", 2, 0)
	if len(p2.Diagnostics) != 0 {
		t.Fatalf("no longer a prompt: %s", mustJSON(p2.Diagnostics))
	}
	c.notify(protocol.MethodTextDocumentDidClose, map[string]any{"textDocument": map[string]any{"uri": "file:///readme.md"}})
	// A request after the close orders it: its reply comes after any
	// publish the close would have caused.
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": "file:///readme.md"}}, &syms)
	ns, _ := c.snapshot()
	for _, n := range ns {
		if strings.Contains(string(n.params), "file:///readme.md") {
			t.Fatalf("plain Markdown got %s", n.params)
		}
	}
	c.shutdown()
}

// TestMainStdio runs Main in a child process over real pipes: a stray
// write to os.Stdout must not reach the protocol stream, and garbage on
// stdin gets error replies while the session completes.
func TestMainStdio(t *testing.T) {
	if os.Getenv("FORGE_LSP_MAIN_HELPER") == "1" {
		// Simulate a library that prints: it must land on stderr.
		testHookStdoutSwapped = func() {
			go fmt.Println("stray print from a library")
		}
		os.Exit(Main(context.Background(), "test", []string{"--stdio"}))
	}
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	var in strings.Builder
	in.WriteString(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`))
	in.WriteString(frame(`{{{ not json`))
	in.WriteString(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
	in.WriteString(frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x.md","languageId":"markdown","version":1,"text":` + strconv.Quote(brokenPrompt) + `}}}`))
	in.WriteString(frame(`{"jsonrpc":"2.0","id":2,"method":"nope/nope"}`))
	in.WriteString(frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///x.md"}}}`))
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainStdio$")
	cmd.Env = append(os.Environ(), "FORGE_LSP_MAIN_HELPER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	// stderr is read as it comes, so that the test can wait for the
	// stray print instead of sleeping.
	stderrPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	stray, stderrDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stderrDone)
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "stray print from a library") {
				close(stray)
			}
		}
	}()
	io.WriteString(stdin, in.String())
	r := bufio.NewReader(stdout)
	got := map[string]json.RawMessage{}
	readFrame := func() map[string]json.RawMessage {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading stdout: %v (stderr: %s)", err, stderr.String())
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			name, v, ok := strings.Cut(line, ":")
			if !ok || name != "Content-Length" {
				t.Fatalf("non-protocol output on stdout: %q", line)
			}
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("stdout frame is not JSON: %q", body)
		}
		return m
	}
	for len(got) < 3 {
		m := readFrame()
		if id, ok := m["id"]; ok && string(id) != "null" {
			got[string(id)] = m["error"]
			if string(id) == "3" {
				got["3"] = m["result"]
			}
		}
	}
	if !strings.Contains(string(got["2"]), "-32601") {
		t.Errorf("unknown method reply: %s", got["2"])
	}
	if !strings.Contains(string(got["3"]), "## Main") {
		t.Errorf("documentSymbol after garbage: %s", got["3"])
	}
	select { // the stray print happens mid-session
	case <-stray:
	case <-time.After(30 * time.Second):
		t.Errorf("the stray print did not reach stderr: %q", stderr.String())
	}
	io.WriteString(stdin, frame(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`)+frame(`{"jsonrpc":"2.0","method":"exit"}`))
	done := make(chan error, 1)
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "Content-Length:") && !strings.HasPrefix(l, "{") {
				t.Errorf("non-protocol output on stdout: %q", l)
			}
		}
		<-stderrDone
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not exit")
	}
	if !strings.Contains(stderr.String(), "stray print from a library") {
		t.Errorf("the stray print went neither to stderr: %q", stderr.String())
	}
}

// TestAnalysisReusesRequestParse: a request during the debounce parses
// the new version at once; the debounced analysis then reuses that parse
// instead of parsing the text a second time, and still publishes.
func TestAnalysisReusesRequestParse(t *testing.T) {
	c := startServer(t, options{Debounce: 200 * time.Millisecond})
	c.initialize(nil)
	uri := "file:///reuse.md"
	c.open(uri, tinyPrompt)
	_, idx := c.diagnosticsFor(uri, 1, 0)
	before := parses.Load()
	c.change(uri, 2, brokenPrompt)
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
	p, _ := c.diagnosticsFor(uri, 2, idx+1)
	if !strings.Contains(mustJSON(p.Diagnostics), "unknown-section") {
		t.Fatalf("version 2 diagnostics: %s", mustJSON(p.Diagnostics))
	}
	if n := parses.Load() - before; n != 1 {
		t.Fatalf("version 2 was parsed %d times, want once", n)
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
