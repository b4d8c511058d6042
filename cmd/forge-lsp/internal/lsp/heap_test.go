package lsp

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
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
	// What the process builds once on first use (API tables, the
	// registry, compiled patterns) is not the server's: a small prompt
	// served first builds it, so the figure is the same whichever tests
	// ran before this one (run alone, it was about 1 MB higher and failed).
	warm := startServer(tb, options{Debounce: -1})
	warm.initialize(nil)
	openForHeap(tb, warm, "file:///heap/warm.md", benchPrompt(200, 3))
	// Chunks other tests parsed (the same text included) must not be
	// counted as already there.
	parse.ResetCache()
	start := live()
	c := startServer(tb, options{Debounce: -1})
	c.initialize(nil)
	text := benchPrompt(10000, 3)
	before := live()
	openForHeap(tb, c, "file:///heap/big.md", text)
	after := live()
	runtime.KeepAlive(c)
	mb := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / (1 << 20) }
	return mb(after, start), mb(after, before), len(text)
}

// openForHeap opens text as uri, waits for its diagnostics and asks for
// its semantic tokens and symbols, as an editor does.
func openForHeap(tb testing.TB, c *testClient, uri, text string) {
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
// 10,000-line prompt: about 11.1 MB is measured, of which 1.1 MB are the
// chunks' Lua tokens (lexed once, packed, shared by the model, the
// symbols and the semantic tokens), 1.5 MB syntax trees, 1.6 MB the
// program model and 1.6 MB the passes' findings memoised per chunk
// (analysis/internal/chunkmemo: an edit elsewhere reuses them). The
// token vocabulary (3.5 MB) is not part of it: the server loads it when
// a model catalog is known or a prose budget is first shown.
const heapBudgetMB = 12

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

// TestNoVocabularyWithoutCatalog: without a model catalog, opening a
// prompt and asking for its diagnostics, semantic tokens and symbols
// neither loads the token vocabulary nor counts prose tokens (which would
// load it), so the vocabulary stays out of the heap (TestHeapOneOpen10k)
// until a prose budget is shown, as an inlay hint then does.
func TestNoVocabularyWithoutCatalog(t *testing.T) {
	var loads atomic.Int32
	old := loadVocabulary
	loadVocabulary = func() error { loads.Add(1); return old() }
	// Registered before the server starts, so it runs after the server
	// has stopped.
	t.Cleanup(func() { loadVocabulary = old })
	counted := features.CountedProse
	features.ForgetCountedProse()

	c := startServer(t, options{Debounce: -1})
	c.initialize(nil)
	uri := "file:///vocab/p.md"
	c.open(uri, benchPrompt(200, 7))
	c.diagnosticsFor(uri, 1, 0)
	params := map[string]any{"textDocument": map[string]any{"uri": uri}}
	var toks semanticTokensResult
	c.mustCall(protocol.MethodSemanticTokensFull, params, &toks)
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, params, &syms)
	if n := loads.Load(); n != 0 {
		t.Fatalf("the vocabulary was loaded %d time(s) without a model catalog", n)
	}
	if n := counted(); n != 0 {
		t.Fatalf("%d prose blocks counted without a model catalog or a shown budget", n)
	}
	var hints []inlayHint
	c.mustCall(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": protocol.Range{End: protocol.Position{Line: 1 << 20}}}, &hints)
	if counted() == 0 {
		t.Fatal("inlay hints showed no prose budget: the check above proves nothing")
	}
}
