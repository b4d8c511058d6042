package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// positionLines are the lines of a 10,000-line prompt the per-position
// benchmarks work at: what a request or an edit costs must not depend on
// where in the document it is.
var positionLines = []int{100, 1000, 5000, 9990}

// reportFlat reports each line's mean time per operation and the ratio of
// the slowest line's to the fastest's, measured interleaved in one run.
func reportFlat(b *testing.B, total []time.Duration, ops int) {
	lo, hi := total[0], total[0]
	for i, d := range total {
		b.ReportMetric(float64(d.Nanoseconds())/float64(ops), "ns/op@"+strconv.Itoa(positionLines[i]))
		lo, hi = min(lo, d), max(hi, d)
	}
	b.ReportMetric(float64(hi)/float64(lo), "slowest/fastest")
}

// editServer is a server holding one open 10,000-line prompt, driven
// through its method table without a connection, so a benchmark measures
// the handler itself: decoding the params, taking the lock, applying the
// change, scheduling the analysis.
func editServer(b *testing.B, text string) (*server, func(raw json.RawMessage)) {
	s := newServer(options{Debounce: time.Hour}) // the analysis never runs
	s.ctx = context.Background()
	s.state = stateRunning
	b.Cleanup(func() {
		s.mu.Lock()
		for _, d := range s.docs {
			d.cancelDiagnostics()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	m := methods()[protocol.MethodTextDocumentDidChange]
	run := func(raw json.RawMessage) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, err := m.serve.fn(s, context.Background(), raw); err != nil {
			b.Fatal(err)
		}
	}
	open := methods()[protocol.MethodTextDocumentDidOpen]
	params, _ := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": "file:///bench/big.md", "languageId": "markdown", "version": 1, "text": text}})
	s.mu.Lock()
	if _, err := open.serve.fn(s, context.Background(), params); err != nil {
		b.Fatal(err)
	}
	s.mu.Unlock()
	return s, run
}

// BenchmarkEditAtLine measures one didChange of a 10,000-line prompt (a
// character typed, then deleted again) at lines 100, 1,000, 5,000 and
// 9,990, interleaved, through the handler as the dispatch runs it. It
// reports the time per edit at each line and slowest/fastest, which stays
// near 1 when finding the edit's offset does not scan the lines before
// it (issue: at line 9,990 it cost 60 times line 100's).
func BenchmarkEditAtLine(b *testing.B) {
	text := benchPrompt(10000, 0)
	if n := strings.Count(text, "\n"); n < 9990 {
		b.Fatalf("bench prompt has %d lines", n)
	}
	_, run := editServer(b, text)
	frames := make([][2]json.RawMessage, len(positionLines))
	for i, l := range positionLines {
		ins := fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":0}},"text":"x"}`, l, l)
		del := fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":1}},"text":""}`, l, l)
		frames[i] = [2]json.RawMessage{json.RawMessage(ins), json.RawMessage(del)}
	}
	version := int32(1)
	change := func(c json.RawMessage) json.RawMessage {
		version++
		return json.RawMessage(fmt.Sprintf(`{"textDocument":{"uri":"file:///bench/big.md","version":%d},"contentChanges":[%s]}`, version, c))
	}
	total := make([]time.Duration, len(positionLines))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range positionLines {
			b.StopTimer()
			ins, del := change(frames[k][0]), change(frames[k][1])
			b.StartTimer()
			t0 := time.Now()
			run(ins)
			run(del)
			total[k] += time.Since(t0)
		}
	}
	b.StopTimer()
	reportFlat(b, total, 2*b.N)
}

// BenchmarkOneEdit applies didChange edits at one line of a 10,000-line
// document (a character typed, then deleted again), nothing else running:
// the document is the benchmark prompt without its promptforge key, so it
// is not analysed, and the open's job is over before the clock starts. It
// is shaped for instruction counts of a single edit, the handler alone:
//
//	go test -c -o lsp.test ./cmd/forge-lsp/internal/lsp
//	GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
//	  --toggle-collect='*lsp.(*server).didChange' \
//	  ./lsp.test -test.run '^$' -test.bench 'OneEdit/line=9990$' -test.benchtime 1x
func BenchmarkOneEdit(b *testing.B) {
	text := strings.Replace(benchPrompt(10000, 1), "promptforge: 1\n", "", 1)
	for _, l := range positionLines {
		b.Run("line="+strconv.Itoa(l), func(b *testing.B) {
			s, run := editServer(b, text)
			s.wg.Wait() // the open's diagnostics job (not a prompt: it parses nothing)
			ins := fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":0}},"text":"x"}`, l, l)
			del := fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":1}},"text":""}`, l, l)
			frames := make([]json.RawMessage, b.N)
			for i := range frames {
				c := ins
				if i%2 == 1 {
					c = del
				}
				frames[i] = json.RawMessage(fmt.Sprintf(`{"textDocument":{"uri":"file:///bench/big.md","version":%d},"contentChanges":[%s]}`, i+2, c))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run(frames[i])
			}
		})
	}
}
