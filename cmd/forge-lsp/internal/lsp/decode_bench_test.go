package lsp

import (
	stdjson "encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"
	segjson "github.com/segmentio/encoding/json"
	"go.lsp.dev/protocol"
)

// BenchmarkDecodeDidChange compares the decoders for the params of a
// didChange carrying a 10,000-line prompt (the server uses goccy/go-json
// for params; segmentio is jsonrpc2's own).
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
}
