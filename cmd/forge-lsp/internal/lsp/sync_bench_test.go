package lsp

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// BenchmarkDidChangeIncremental is BenchmarkDidChangeToDiagnostics with
// incremental sync, as an editor sends it while typing: each didChange
// carries one ranged change (the middle section's `local total = N`
// gets a new number, never seen before) instead of the whole text. It
// reports p50/p99 from sending the change to receiving the diagnostics
// of that version, and their ratio to the bare parse and analysis of the
// same edited text measured in the same run.
func BenchmarkDidChangeIncremental(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("lines="+strconv.Itoa(n), func(b *testing.B) {
			text := benchPrompt(n, 0)
			// The middle section is the one whose Lua starts at 0 (see
			// benchPrompt); its line is where the typing happens.
			at := strings.Index(text, "local total = 0\n")
			if at < 0 {
				b.Fatal("no edit site in the bench prompt")
			}
			at += len("local total = ")
			number := "0"
			edit := func(k int) (string, map[string]any) {
				f := source.NewFile("x", []byte(text))
				r := lspRange(f, source.Span{Start: at, End: at + len(number)})
				old := len(number)
				number = strconv.Itoa(1000 + k)
				text = text[:at] + number + text[at+old:]
				return text, map[string]any{"range": r, "text": number}
			}
			k := 0
			base := baseline(func() string { k++; t, _ := edit(k); return t }, func(t []byte) { checker.Check(parse.Parse("/bench/big.md", t), nil) })

			benchChangeLatency(b, text, base, func(uri string, v int32) []byte {
				k++
				_, change := edit(k)
				frame := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":%q,"version":%d},"contentChanges":[%s]}}`, uri, v, mustJSON(change)))
				return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(frame)), frame...)
			})
		})
	}
}
