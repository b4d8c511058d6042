package lsp

import (
	stdjson "encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"
	segjson "github.com/segmentio/encoding/json"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// BenchmarkDecodeDidChange compares the decoders for the params of a
// didChange carrying a 10,000-line prompt (the server uses goccy/go-json
// for params; segmentio is jsonrpc2's own), and the whole message's
// decode both ways the stream can: "library+params" is jsonrpc2's
// DecodeMessage then the handler's decode of the params, "predecode" the
// stream's one pass (stream.predecode).
func BenchmarkDecodeDidChange(b *testing.B) {
	text := benchPrompt(10000, 1)
	q, _ := stdjson.Marshal(text)
	body := []byte(`{"textDocument":{"uri":"file:///x.md","version":3},"contentChanges":[{"text":` + string(q) + `}]}`)
	for _, d := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{{"goccy", gojson.Unmarshal}, {"segmentio", segjson.Unmarshal}, {"std", stdjson.Unmarshal}} {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				var p protocol.DidChangeTextDocumentParams
				if err := d.unmarshal(body, &p); err != nil {
					b.Fatal(err)
				}
				if len(p.ContentChanges) != 1 || p.ContentChanges[0].Text != text || p.TextDocument.Version != 3 {
					b.Fatal("decoded params differ")
				}
			}
		})
	}
	msg := []byte(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":` + string(body) + `}`)
	b.Run("library+params", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			m, err := jsonrpc2.DecodeMessage(msg)
			if err != nil {
				b.Fatal(err)
			}
			var p didChangeParams
			if err := gojson.Unmarshal(m.(*jsonrpc2.Notification).Params(), &p); err != nil || p.ContentChanges[0].Text != text {
				b.Fatal("decoded params differ", err)
			}
		}
	})
	b.Run("predecode", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		var s stream
		for i := 0; i < b.N; i++ {
			m := s.predecode(msg)
			if p, ok := s.predecoded(m.(jsonrpc2.Request)).(*didChangeParams); !ok || p.ContentChanges[0].Text != text {
				b.Fatal("decoded params differ")
			}
		}
	})
}
