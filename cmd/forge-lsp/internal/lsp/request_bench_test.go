package lsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// requestAt is where a per-position request is asked near a line: the
// first line at or after it that holds want, and the column just after
// the text up to at within that line.
func requestAt(b *testing.B, lines []string, near int, want, at string) protocol.Position {
	b.Helper()
	for l := near; l < len(lines); l++ {
		if i := strings.Index(lines[l], want); i >= 0 {
			return protocol.Position{Line: uint32(l), Character: uint32(i + strings.Index(lines[l][i:], at) + len(at))}
		}
	}
	b.Fatalf("no %q at or after line %d", want, near)
	return protocol.Position{}
}

// BenchmarkRequestAtLine measures hover, completion and
// semanticTokens/range on a 10,000-line prompt at lines 100, 1,000, 5,000
// and 9,990 (the nearest line of the kind each request needs), over the
// pipe as an editor asks, interleaved in one run. It reports the median
// time per request at each line and slowest/fastest of the medians, which stays near 1 (budget
// 2x) when no request scans the document up to its position. Each
// position is asked on a version the server has analysed, as when the
// user pauses to hover or complete.
func BenchmarkRequestAtLine(b *testing.B) {
	text := benchPrompt(10000, 0)
	lines := strings.Split(text, "\n")
	uri := "file:///bench/big.md"
	td := map[string]any{"uri": uri}
	type request struct {
		name, method string
		params       func(line int) any
		// check fails the benchmark on an empty answer, so that a
		// request that found nothing cannot look fast.
		check func(json.RawMessage) error
	}
	nonEmpty := func(min int) func(json.RawMessage) error {
		return func(res json.RawMessage) error {
			if len(res) < min || string(res) == "null" {
				return fmt.Errorf("answer %.80s", res)
			}
			return nil
		}
	}
	requests := []request{
		{"hover", protocol.MethodTextDocumentHover, func(l int) any {
			return map[string]any{"textDocument": td, "position": requestAt(b, lines, l, `tools.add_local(`, "add_")}
		}, nonEmpty(40)},
		{"completion", protocol.MethodTextDocumentCompletion, func(l int) any {
			return map[string]any{"textDocument": td, "position": requestAt(b, lines, l, `tools.add({`, "tools.")}
		}, nonEmpty(200)},
		{"semantic-range", protocol.MethodSemanticTokensRange, func(l int) any {
			end := min(l+50, len(lines)-1)
			return map[string]any{"textDocument": td, "range": map[string]any{
				"start": map[string]any{"line": l, "character": 0}, "end": map[string]any{"line": end, "character": 0}}}
		}, nonEmpty(200)},
	}
	for _, rq := range requests {
		b.Run(rq.name, func(b *testing.B) {
			c := startServer(b, options{Debounce: time.Millisecond})
			c.initialize(nil)
			ns, _ := c.snapshot()
			c.open(uri, text)
			c.diagnosticsFor(uri, 1, len(ns))
			params := make([]any, len(positionLines))
			for i, l := range positionLines {
				params[i] = rq.params(l)
			}
			var res json.RawMessage
			for i := range params { // warm: the index and the snapshot's parse
				c.mustCall(rq.method, params[i], &res)
				if err := rq.check(res); err != nil {
					b.Fatalf("%s at line %d: %v", rq.name, positionLines[i], err)
				}
			}
			lat := make([][]time.Duration, len(positionLines))
			b.ResetTimer()
			for range b.N {
				for i := range params {
					t0 := time.Now()
					c.mustCall(rq.method, params[i], &res)
					lat[i] = append(lat[i], time.Since(t0))
				}
			}
			b.StopTimer()
			// Medians: on a shared machine one request in a run may
			// wait for the scheduler for longer than all the others.
			med := make([]time.Duration, len(lat))
			for i := range lat {
				med[i] = percentile(lat[i], 50)
			}
			reportFlat(b, med, 1)
		})
	}
}
