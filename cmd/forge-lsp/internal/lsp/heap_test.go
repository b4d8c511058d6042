package lsp

import (
	"runtime"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"

	"go.lsp.dev/protocol"
)

// heapOneOpen10k starts a server, opens one 10,000-line prompt, waits
// for its diagnostics and asks for its semantic tokens and symbols, as an
// editor does. It returns the live heap (after a garbage collection) the
// server holds then, against the heap before it started (server, token
// vocabulary and document), and the part the open document adds to the
// idle initialised server (doc).
func heapOneOpen10k(tb testing.TB) (server, doc float64, bytes int) {
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// Chunks other tests parsed (the same text included) must not be
	// counted as already there.
	parse.ResetCache()
	start := live()
	c := startServer(tb, options{Debounce: -1})
	c.initialize(nil)
	text := benchPrompt(10000, 3)
	uri := "file:///heap/big.md"
	before := live()
	c.open(uri, text)
	c.diagnosticsFor(uri, 1, 0)
	params := map[string]any{"textDocument": map[string]any{"uri": uri}}
	var toks semanticTokensResult
	c.mustCall(protocol.MethodSemanticTokensFull, params, &toks)
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, params, &syms)
	if len(toks.Data) == 0 || len(syms) == 0 {
		tb.Fatal("no tokens or symbols")
	}
	toks.Data, syms = nil, nil
	after := live()
	runtime.KeepAlive(c)
	mb := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / (1 << 20) }
	return mb(after, start), mb(after, before), len(text)
}

// BenchmarkHeapOneOpen10k reports the live heap of one open 10,000-line
// prompt (about 223 KB of text) after its diagnostics, semantic tokens and
// symbols.
func BenchmarkHeapOneOpen10k(b *testing.B) {
	for b.Loop() {
		server, doc, n := heapOneOpen10k(b)
		b.ReportMetric(server, "server-heap-MB")
		b.ReportMetric(doc, "doc-heap-MB")
		b.ReportMetric(float64(n)/1024, "text-KB")
	}
}

// heapBudgetMB bounds the live heap of a fresh server with one open
// 10,000-line prompt: about 9.4 MB is measured, of which 1.1 MB are the
// chunks' Lua tokens (lexed once, packed, shared by the model, the
// symbols and the semantic tokens), 1.5 MB syntax trees and 1.6 MB the
// program model. The token vocabulary (3.5 MB) is not part of it: the
// server loads it when a model catalog is known or a prose budget is
// first shown.
const heapBudgetMB = 10

// TestHeapOneOpen10k keeps the live heap of a fresh server with one open
// 10,000-line prompt within heapBudgetMB.
func TestHeapOneOpen10k(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies memory use; the budget applies to normal builds")
	}
	server, doc, _ := heapOneOpen10k(t)
	t.Logf("one open 10,000-line prompt: %.1f MB of live heap (%.1f MB for the document)", server, doc)
	if server > heapBudgetMB {
		t.Fatalf("live heap %.1f MB with one open 10,000-line prompt, budget %d MB", server, heapBudgetMB)
	}
}
