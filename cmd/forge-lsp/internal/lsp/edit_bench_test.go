package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// BenchmarkEditParseAnalyse is one keystroke's work on a 10,000-line
// prompt with nothing else running, shaped for instruction counts and
// allocations per edit: the didChange of a character typed at the start
// of a line (or deleted again, every other edit), the parse of the new
// version as a diagnostics job makes it (pinDoc, ready: ParseEdited from
// the previous version's parse) and its analysis. The lines spread over
// the whole body, 64 of them in turn.
//
//	go test -c -o lsp.test ./cmd/forge-lsp/internal/lsp
//	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GOGC=off valgrind --tool=callgrind \
//	  ./lsp.test -test.run '^$' -test.bench EditParseAnalyse -test.benchtime 100x
//
// (and again at 200x: the difference over 100 is one edit).
func BenchmarkEditParseAnalyse(b *testing.B) {
	text := benchPrompt(10000, 1)
	lines := strings.Count(text, "\n")
	s, run := editServer(b, text)
	uri := "file:///bench/big.md"
	s.mu.Lock()
	d := s.docs[uriKey(protocol.DocumentURI(uri))]
	s.mu.Unlock()
	if d == nil {
		b.Fatal("document not open")
	}
	frames := make([]json.RawMessage, b.N)
	for i := range frames {
		l := 5 + (i/2%64)*7919%(lines-5) // after the frontmatter
		c := fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":0}},"text":"x"}`, l, l)
		if i%2 == 1 {
			c = fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":1}},"text":""}`, l, l)
		}
		frames[i] = json.RawMessage(fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d},"contentChanges":[%s]}`, uri, i+2, c))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(frames[i])
		s.mu.Lock()
		pin := s.pinDoc(d)
		s.mu.Unlock()
		snap := s.ready(pin)
		if snap.prompt == nil {
			b.Fatalf("edit %d: not parsed", i)
		}
		s.analyse(ctx, snap)
	}
}
