package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stdioServer runs `forge-lsp mcp --stdio` over pipes and reads its
// answers a line at a time.
type stdioServer struct {
	t     testing.TB
	in    *io.PipeWriter
	lines chan string
	done  chan int
	errb  *syncBuffer
}

func startStdio(t testing.TB, dir string) *stdioServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioServer{t: t, in: inW, lines: make(chan string, 64), done: make(chan int, 1), errb: &syncBuffer{}}
	go func() {
		s.done <- Main([]string{"--stdio", dir}, "test", inR, outW, s.errb)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	s.next()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// send writes one line; a server that stops reading fails the test.
func (s *stdioServer) send(line string) {
	s.t.Helper()
	werr := make(chan error, 1)
	go func() {
		_, err := io.WriteString(s.in, line+"\n")
		werr <- err
	}()
	select {
	case err := <-werr:
		if err != nil {
			s.t.Fatalf("the server stopped reading: %v (stderr %s)", err, s.errb.String())
		}
	case code := <-s.done:
		s.t.Fatalf("the server exited %d; stderr %s", code, s.errb.String())
	case <-time.After(20 * time.Second):
		s.t.Fatalf("the server stopped reading; stderr %s", s.errb.String())
	}
}

// next is the next line the server writes.
func (s *stdioServer) next() map[string]any {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("the server ended its output; stderr %s", s.errb.String())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			s.t.Fatalf("not JSON from the server: %q", l)
		}
		return m
	case code := <-s.done:
		s.t.Fatalf("the server exited %d; stderr %s", code, s.errb.String())
	case <-time.After(20 * time.Second):
		s.t.Fatal("no answer from the server")
	}
	return nil
}

// TestStdioBadFramesAnswered: every class of bad frame gets a JSON-RPC
// error and the server goes on serving, a run in flight included.
func TestStdioBadFramesAnswered(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "echo.md"), echoPrompt)
	s := startStdio(t, dir)
	big := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"run_prompt","arguments":{"prompt":"echo","args":"` + strings.Repeat("x", MaxFrame+1<<20) + `"}}}`
	for _, tc := range []struct {
		name, line string
		code       float64
		id         any
	}{
		{"oversized", big, -32600, nil},
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method":`, -32700, nil},
		{"binary", "\x00\xff\xfe garbage \x01", -32700, nil},
		{"not an object", `42`, -32600, nil},
		{"a string", `"ping"`, -32600, nil},
		{"no jsonrpc", `{"id":2,"method":"ping"}`, -32600, float64(2)},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600, float64(3)},
		{"a batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, nil},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{"no method or result", `{"jsonrpc":"2.0"}`, -32600, nil},
	} {
		s.send(tc.line)
		m := s.next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id || e["message"] == "" {
			t.Errorf("%s: answered %v; want code %v, id %v", tc.name, m, tc.code, tc.id)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_prompt","arguments":{"prompt":"echo","args":"still here"}}}`)
	if m := s.next(); m["id"] != float64(5) || !strings.Contains(mustJSON(t, m), "STILL HERE") {
		t.Fatalf("after the bad frames: %v", m)
	}
}
