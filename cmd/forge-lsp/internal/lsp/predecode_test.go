package lsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// TestPredecodedDidChange: a didChange is decoded by the stream in one
// pass (whatever the order of its members, ranged or whole, large or a
// keystroke) and applied as the handler's own decode would; a frame that
// pass does not take (malformed, a call) goes the library's way as
// before, and the document keeps its last good text.
func TestPredecodedDidChange(t *testing.T) {
	var srv *server
	testHookServer = func(s *server) { srv = s }
	c := startServer(t, options{Debounce: time.Hour})
	c.initialize(nil)
	testHookServer = nil
	uri := "file:///pre/a.md"
	text := benchPrompt(1000, 1)
	c.open(uri, text)
	frame := func(body string) []byte {
		return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	}
	// Escapes the decoders must agree on, and characters outside the BMP.
	tail := `\"quoted\" \\ \/ \t \u00e9 \ud83d\ude00 ` + "😀 é"
	serverText := func() string {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return string(srv.docs[uriKey(protocol.DocumentURI(uri))].text)
	}
	// settled waits until the server has read the frames sent so far: a
	// request's reply comes after them.
	settled := func() {
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
	}
	settled() // the open is written by the client's stream; frames below are written directly
	decoded := func(jsonText string) string {
		var s string
		if err := json.Unmarshal([]byte(`"`+jsonText+`"`), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	before := predecodes.Load()
	whole := quote(text) + tail
	for i, body := range []string{
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"` + uri + `","version":2},"contentChanges":[{"text":"` + whole + `"}]}}`,
		`{"params":{"contentChanges":[{"text":"` + whole + `x"}],"textDocument":{"version":3,"uri":"` + uri + `"}},"method":"textDocument/didChange","jsonrpc":"2.0","id":null}`,
	} {
		if _, err := c.raw.Write(frame(body)); err != nil {
			t.Fatal(err)
		}
		settled()
		want := decoded(whole) + strings.Repeat("x", i)
		if got := serverText(); got != want {
			t.Fatalf("whole text %d: the server's text differs from the sent one (%d bytes, want %d)", i, len(got), len(want))
		}
	}
	// A ranged change inserting a large text at the start of line 1.
	ins := strings.Repeat("Some prose. ", 2000)
	body := `{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"` + uri + `","version":4},"contentChanges":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":0}},"text":"` + ins + tail + `"}]}}`
	if _, err := c.raw.Write(frame(body)); err != nil {
		t.Fatal(err)
	}
	settled()
	prev := decoded(whole) + "x"
	nl := strings.IndexByte(prev, '\n') + 1
	want := prev[:nl] + ins + decoded(tail) + prev[nl:]
	if got := serverText(); got != want {
		t.Fatalf("ranged change: the server's text differs from the client's")
	}
	// A keystroke: a small frame.
	body = `{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"` + uri + `","version":5},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"text":"é"}]}}`
	if _, err := c.raw.Write(frame(body)); err != nil {
		t.Fatal(err)
	}
	settled()
	if want = "é" + want; serverText() != want {
		t.Fatalf("keystroke: the server's text differs from the client's")
	}
	if n := predecodes.Load() - before; n != 4 {
		t.Fatalf("%d of 4 didChanges decoded by the stream", n)
	}
	// Not taken: malformed JSON, and a didChange sent as a call.
	before = predecodes.Load()
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"` + uri + `","version":6},"contentChanges":[{"text":"` + whole + `"}]}`,
		`{"jsonrpc":"2.0","id":7,"method":"textDocument/didChange","params":{"textDocument":{"uri":"` + uri + `","version":7},"contentChanges":[{"text":"` + whole + `"}]}}`,
	} {
		if _, err := c.raw.Write(frame(body)); err != nil {
			t.Fatal(err)
		}
	}
	settled()
	if n := predecodes.Load() - before; n != 0 {
		t.Fatalf("%d frames the stream should not take were decoded by it", n)
	}
	if got := serverText(); got != decoded(whole) && got != want {
		t.Fatalf("after a malformed frame the server holds neither the last good text nor the call's")
	}
}
