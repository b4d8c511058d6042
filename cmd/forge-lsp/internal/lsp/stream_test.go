package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestAppendResponse: the stream writes a successful response with the
// same bytes as the library's own marshalling.
func TestAppendResponse(t *testing.T) {
	results := []any{
		nil,
		[]uint32{0, 1, 2, 4294967295},
		map[string]any{"data": []int{}, "text": "<a href=\"x\">&amp; \u2028 é 😀</a>"},
		"plain",
		3.5,
		[]any{map[string]any{"nested": []any{true, false, nil}}},
		&semanticTokensResult{Data: []uint32{1, 2, 3}},
	}
	ids := []jsonrpc2.ID{jsonrpc2.NewNumberID(7), jsonrpc2.NewStringID("req-<1>")}
	for _, id := range ids {
		for _, res := range results {
			r, err := jsonrpc2.NewResponse(id, res, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendResponse(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("id %v result %#v:\n got %s\nwant %s", id, res, got, want)
			}
		}
	}
}

// TestMayHaveMethod: every message that can carry a "method" member is
// probed, whatever the spelling of its key.
func TestMayHaveMethod(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"data":[1,2,3]}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, true},
		{`{"jsonrpc":"2.0","id":1,"\u006dethod":""}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":"\u00e9"}`, true},
	} {
		if got := mayHaveMethod([]byte(c.data)); got != c.want {
			t.Errorf("mayHaveMethod(%s) = %v, want %v", c.data, got, c.want)
		}
	}
}

// rwBuffer is a connection whose peer has written in and reads out.
type rwBuffer struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *rwBuffer) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *rwBuffer) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *rwBuffer) Close() error                { return nil }

// TestStreamBodyReused: the stream reads every body into one buffer, and
// no message it returned refers to it: a didChange's text (predecode), a
// call's and a notification's params (the library's decode) are intact
// after the messages after them were read into the same buffer. Reading
// a large didChange allocates about one copy of it, the decoded text
// (two when each body had a buffer of its own).
func TestStreamBodyReused(t *testing.T) {
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	big := func(c byte) string { return strings.Repeat(string(c), 200<<10) }
	didChange := func(v int, text string) string {
		return frame(fmt.Sprintf(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a.md","version":%d},"contentChanges":[{"text":"%s"}]}}`, v, text))
	}
	var wire strings.Builder
	wire.WriteString(didChange(1, big('a')))
	wire.WriteString(frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"text":"` + big('b')[:1000] + `"}}`))
	wire.WriteString(frame(`{"jsonrpc":"2.0","method":"$/note","params":{"text":"` + big('c')[:1000] + `"}}`))
	wire.WriteString(frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{`)) // malformed: answered, skipped
	const n = 8
	for v := 0; v < n; v++ {
		wire.WriteString(didChange(10+v, big(byte('d'+v))))
	}
	conn := &rwBuffer{in: bytes.NewReader([]byte(wire.String()))}
	s := newStreamLimit(conn, maxMessageSize)
	s.predecodeOn = true
	defer s.Close()
	ctx := context.Background()
	read := func() jsonrpc2.Message {
		t.Helper()
		m, _, err := s.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	textOf := func(m jsonrpc2.Message) string {
		t.Helper()
		p, _ := s.predecoded(m.(jsonrpc2.Request)).(*didChangeParams)
		if p == nil || len(p.ContentChanges) != 1 {
			t.Fatalf("%v: not predecoded", m)
		}
		return p.ContentChanges[0].Text
	}
	first := textOf(read())
	call, note := read().(*jsonrpc2.Call), read().(*jsonrpc2.Notification)
	texts := make([]string, n)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for v := range texts {
		texts[v] = textOf(read())
	}
	runtime.ReadMemStats(&m1)
	for v, text := range texts {
		if text != big(byte('d'+v)) {
			t.Fatalf("didChange %d: text differs", v)
		}
	}
	if first != big('a') {
		t.Errorf("the first didChange's text changed when later bodies were read")
	}
	if want := `{"text":"` + big('b')[:1000] + `"}`; string(call.Params()) != want {
		t.Errorf("the call's params changed when later bodies were read")
	}
	if want := `{"text":"` + big('c')[:1000] + `"}`; string(note.Params()) != want {
		t.Errorf("the notification's params changed when later bodies were read")
	}
	if per := float64(m1.TotalAlloc-m0.TotalAlloc) / n / (200 << 10); per > 1.5 {
		t.Errorf("reading a didChange allocated %.2f times its text, want at most 1.5", per)
	}
}

// TestDecodeSmall: a small request or notification decodes to what the
// library's DecodeMessage makes of it (its kind, id, method, and params
// of the same JSON value), and everything else is left to the library.
// Reading one allocates a few hundred bytes, not the library decoder's
// 32 KB buffer.
func TestDecodeSmall(t *testing.T) {
	taken := []string{
		`{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.md"},"position":{"line":3,"character":4}}}`,
		`{"method":"textDocument/hover","params":[1, 2.5e3, "x"],"id":"req-<7>","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":12}}`,
		"{ \"jsonrpc\" : \"2.0\" , \"method\" : \"n\" , \"params\" : { \"s\" : \"<a> & \\u00e9 \\ud83d\\ude00 \\\"q\\\" \\n\" , \"t\" : [ true , false , null ] } }\n",
		`{"jsonrpc":"2.0","id":-3,"method":"m","params":{},"extra":{"ignored":[1]}}`,
		`{"jsonrpc":"2.0","id":null,"method":"m","params":{"a":1}}`,
	}
	left := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","method":"m","params":null}`,
		`{"jsonrpc":"1.0","method":"m","params":{}}`,
		`{"method":"m","params":{}}`,
		`{"jsonrpc":"2.0","method":"","params":{}}`,
		`{"jsonrpc":"2.0","method":"m","params":{}`,
		`{"jsonrpc":"2.0","method":"m","params":{}} {}`,
		`{"jsonrpc":"2.0","method":"m","params":{"big":"` + strings.Repeat("x", smallMessage) + `"}}`,
	}
	value := func(raw []byte) any {
		t.Helper()
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("params %s: %v", raw, err)
		}
		return v
	}
	for _, data := range taken {
		got := decodeSmall([]byte(data))
		want, err := jsonrpc2.DecodeMessage([]byte(data))
		if got == nil || err != nil {
			t.Errorf("%s: decodeSmall %v, library error %v", data, got, err)
			continue
		}
		switch w := want.(type) {
		case *jsonrpc2.Call:
			g, ok := got.(*jsonrpc2.Call)
			if !ok || g.ID() != w.ID() || g.Method() != w.Method() || !reflect.DeepEqual(value(g.Params()), value(w.Params())) {
				t.Errorf("%s: decoded as %#v, the library makes %#v", data, got, want)
			}
		case *jsonrpc2.Notification:
			g, ok := got.(*jsonrpc2.Notification)
			if !ok || g.Method() != w.Method() || !reflect.DeepEqual(value(g.Params()), value(w.Params())) {
				t.Errorf("%s: decoded as %#v, the library makes %#v", data, got, want)
			}
		default:
			t.Errorf("%s: the library makes a %T", data, want)
		}
	}
	for _, data := range left {
		if got := decodeSmall([]byte(data)); got != nil {
			t.Errorf("%.80s: decoded as %#v, want it left to the library", data, got)
		}
	}
	// Through the stream, whose body buffer is reused: the params are
	// the message's own.
	const n = 50
	var wire strings.Builder
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a%d.md"},"position":{"line":%d,"character":4}}}`, i, i, i)
		fmt.Fprintf(&wire, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	s := newStreamLimit(&rwBuffer{in: bytes.NewReader([]byte(wire.String()))}, maxMessageSize)
	defer s.Close()
	msgs := make([]jsonrpc2.Message, n)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := range msgs {
		m, _, err := s.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = m
	}
	runtime.ReadMemStats(&m1)
	for i, m := range msgs {
		c, ok := m.(*jsonrpc2.Call)
		want := fmt.Sprintf(`{"position":{"character":4,"line":%d},"textDocument":{"uri":"file:///a%d.md"}}`, i, i)
		if !ok || c.ID() != jsonrpc2.NewNumberID(int32(i)) || string(c.Params()) != want && !reflect.DeepEqual(value(c.Params()), value([]byte(want))) {
			t.Fatalf("message %d: %#v", i, m)
		}
	}
	if per := (m1.TotalAlloc - m0.TotalAlloc) / n; per > 4<<10 {
		t.Errorf("reading a hover request allocated %d bytes", per)
	}
}
