package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
	"go.lsp.dev/protocol"
)

// benchPrompt builds a realistic prompt of about n lines: H1 bindings, then
// sections with Lua, local tools, control flow, placeholders and prose.
// variant is written into the H1 prose and into the Lua of the middle
// section, so that consecutive variants differ as after typing: one
// section's code changed (never seen before by the parser's caches) and
// everything after it shifted when the number's length changes.
func benchPrompt(n, variant int) string {
	var b strings.Builder
	lines := 0
	w := func(s string) {
		b.WriteString(s)
		lines += strings.Count(s, "\n")
	}
	w("---\nname: big\ndescription: A large prompt for benchmarks.\npromptforge: 1\n---\n\n# Big\n\n")
	w("```lua\nmodels.default(\"writer\", \"a careful writer\")\ntools.bind(\"search\", \"web search\", \"Search the web for current information\")\ntools.bind(\"fetch\", \"fetch pages\", \"Fetch a web page and return its text\")\ntools.always(\"search\")\n```\n\n")
	w(fmt.Sprintf("Edit number %d.\n\n", variant))
	middle := n / 50 // sections are 25 lines long
	for i := 0; lines < n; i++ {
		start := 0
		if i == middle {
			start = variant
		}
		w(fmt.Sprintf("## Step %d\n\n```lua\ntools.add({\"fetch\"})\nlocal total = %d\nfor k = 1, 10 do\n  total = total + k\nend\nvar.step_%d = tostring(total)\ntools.add_local(\"count_%d\", \"Count the words of item %d\", { text = {\"string\", \"the text\"} }, function(args)\n  return tostring(#args.text)\nend)\n```\n\nSummarise {{ var.step_%d }} for {{ args }} using search and fetch.\nKeep it short and factual.\n\n```lua\nif tools.calls.fetch > 3 then\n  log(\"many fetches\")\nend\n```\n\n", i, start, i, i, i, i))
	}
	return b.String()
}

func TestBenchPromptShape(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		src := benchPrompt(n, 1)
		if l := strings.Count(src, "\n"); l < n || l > n+40 {
			t.Fatalf("benchPrompt(%d) has %d lines", n, l)
		}
		p := parse.Parse("big.md", []byte(src))
		if len(p.Errors) > 0 {
			t.Fatalf("benchPrompt(%d): parse error %s", n, p.Errors[0].Message)
		}
		// Two variants differ in exactly one section's Lua.
		q := parse.Parse("big.md", []byte(benchPrompt(n, 12)))
		if len(q.Sections) != len(p.Sections) {
			t.Fatalf("variants have %d and %d sections", len(p.Sections), len(q.Sections))
		}
		changed := 0
		for i, s := range p.Sections {
			for j, b := range s.Blocks {
				if b.Chunk != nil && b.Chunk.Source != q.Sections[i].Blocks[j].Chunk.Source {
					changed++
				}
			}
		}
		if changed != 1 {
			t.Fatalf("benchPrompt(%d): %d chunks differ between variants, want 1", n, changed)
		}
	}
}

// publishWaiter delivers publishDiagnostics versions for one URI.
func publishWaiter(c *testClient, uri string) chan publishParams {
	ch := make(chan publishParams, 1024)
	c.mu.Lock()
	c.hook = func(n note) {
		if n.method != protocol.MethodTextDocumentPublishDiagnostics {
			return
		}
		var p publishParams
		if json.Unmarshal(n.params, &p) == nil && string(p.URI) == uri {
			ch <- p
		}
	}
	c.mu.Unlock()
	return ch
}

// BenchmarkDidChangeToDiagnostics measures the latency from sending
// didChange to receiving the publishDiagnostics for that version, with
// the debounce disabled, over an in-memory pipe. Each change is a new
// text: the middle section's code and the H1 prose edited. It reports p50 and p99
// and their ratio to the bare analysis (parse + checker.Check on the same
// text), measured in the same run.
func BenchmarkDidChangeToDiagnostics(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("lines="+strconv.Itoa(n), func(b *testing.B) {
			// Every edit is a text never seen before (see benchPrompt): the
			// caches of the parser and the analyzer only know the text
			// before it, as when typing.
			variant := 1
			next := func() string { variant++; return benchPrompt(n, variant) }
			// Baseline: parse and analysis alone, on the same kind of edits.
			base := baseline(next, func(text []byte) { checker.Check(parse.Parse("/bench/big.md", text), nil) })
			// The client's JSON encoding of the 300 KB text happens in the
			// editor's process, not the server's: each didChange frame is
			// built before the clock starts and written raw to the pipe.
			// The server's reading and decoding of it are measured.
			benchChangeLatency(b, next(), base, func(uri string, v int32) []byte {
				quoted, _ := json.Marshal(next())
				return didChangeFrame(uri, v, quoted)
			})
		})
	}
}

// benchChangeLatency opens text in a server without debounce, then b.N
// times writes the didChange frame(uri, version) and waits for the
// diagnostics of that version. It reports p50 and p99 of those latencies
// and their ratio to base, the bare analysis measured in the same run,
// and how the garbage collector weighs on them: the heap allocated per
// edit (the whole process: the server, and the client reading the
// diagnostics), the share of edits during which a collection ran, their
// p50, and p99 of the others.
//
// The frames are the editor's work, not the server's: they are all built
// before the clock starts and kept in a file, and each is read back into
// one buffer, so that building them makes no garbage for the server's
// collector and holds no memory that would change its pacing.
func benchChangeLatency(b *testing.B, text string, base time.Duration, frame func(uri string, version int32) []byte) {
	c := startServer(b, options{Debounce: -1})
	c.initialize(nil)
	uri := "file:///bench/big.md"
	frames, err := os.Create(filepath.Join(b.TempDir(), "frames"))
	if err != nil {
		b.Fatal(err)
	}
	defer frames.Close()
	ends := make([]int64, 0, b.N+1)
	ends = append(ends, 0)
	for i := 0; i < b.N; i++ {
		n, err := frames.Write(frame(uri, int32(i+2)))
		if err != nil {
			b.Fatal(err)
		}
		ends = append(ends, ends[i]+int64(n))
	}
	var buf []byte
	ch := publishWaiter(c, uri)
	c.open(uri, text)
	<-ch
	runtime.GC() // the frames' garbage
	lat := make([]time.Duration, 0, b.N)
	var inGC, noGC []time.Duration
	alloc0 := allocated()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := int32(i + 2)
		b.StopTimer()
		f := slices.Grow(buf[:0], int(ends[i+1]-ends[i]))[:ends[i+1]-ends[i]]
		if _, err := frames.ReadAt(f, ends[i]); err != nil {
			b.Fatal(err)
		}
		buf = f
		g0 := gcCycles()
		b.StartTimer()
		t0 := time.Now()
		if _, err := c.raw.Write(f); err != nil {
			b.Fatal(err)
		}
		for p := range ch {
			if p.Version == v {
				break
			}
		}
		d := time.Since(t0)
		lat = append(lat, d)
		if gcCycles() != g0 {
			inGC = append(inGC, d)
		} else {
			noGC = append(noGC, d)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(allocated()-alloc0)/float64(b.N)/(1<<20), "alloc-MB/edit")
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(ms(base), "bare-analysis-ms")
	b.ReportMetric(float64(p50)/float64(base), "p50/bare")
	b.ReportMetric(float64(p99)/float64(base), "p99/bare")
	b.ReportMetric(100*float64(len(inGC))/float64(len(lat)), "gc-edits-%")
	b.ReportMetric(ms(percentile(inGC, 50)), "gc-edits-p50-ms")
	b.ReportMetric(ms(percentile(noGC, 99)), "other-p99-ms")
}

// allocated is the number of bytes the process has allocated on the heap
// so far (runtime/metrics).
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcCycles is the number of garbage collections the process has
// completed (runtime/metrics).
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// didChangeFrame is a whole didChange message with its LSP header;
// quoted is the JSON-encoded full text.
func didChangeFrame(uri string, version int32, quoted []byte) []byte {
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":%q,"version":%d},"contentChanges":[{"text":`, uri, version)
	body = append(body, quoted...)
	body = append(body, "}]}}"...)
	return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...)
}

// baseline is the median time of f over 20 texts from next: the same
// work without the server, measured in the same run.
func baseline(next func() string, f func(text []byte)) time.Duration {
	var ds []time.Duration
	for i := 0; i < 20; i++ {
		text := []byte(next())
		t0 := time.Now()
		f(text)
		ds = append(ds, time.Since(t0))
	}
	return percentile(ds, 50)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}

// rssMB reads the process's resident set size from /proc (Linux).
func rssMB() (float64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, err := strconv.ParseFloat(f[1], 64)
				return kb / 1024, err == nil
			}
		}
	}
	return 0, false
}

// BenchmarkMemory200Docs opens 200 distinct 1,000-line prompts, waits for
// all their diagnostics and features' state, and reports the process's
// resident memory and the live heap, against the memory before opening
// (same run).
func BenchmarkMemory200Docs(b *testing.B) {
	for i := 0; i < b.N; i++ {
		rss, heap, baseRSS := memory200(b)
		b.ReportMetric(rss, "rss-MB")
		b.ReportMetric(heap, "heap-MB")
		b.ReportMetric(rss-baseRSS, "rss-growth-MB")
	}
}

// TestMemory200Docs keeps the resident-memory budget honest in every test
// run: 200 open 1,000-line prompts stay under 150 MB RSS.
func TestMemory200Docs(t *testing.T) {
	if !testflag.Long() {
		t.Skip("opens 200 prompts; runs under -long (CI)")
	}
	if _, ok := rssMB(); !ok {
		t.Skip("no /proc/self/status on this system")
	}
	if raceEnabled {
		t.Skip("the race detector multiplies memory use; the budget applies to normal builds")
	}
	rss, heap, _ := memory200(t)
	t.Logf("200 x 1,000-line prompts: RSS %.1f MB, heap %.1f MB", rss, heap)
	if rss >= 150 {
		t.Fatalf("resident memory %.1f MB, budget 150 MB", rss)
	}
}

func memory200(tb testing.TB) (rss, heap, baseRSS float64) {
	runtime.GC()
	baseRSS, _ = rssMB()
	c := startServer(tb, options{Debounce: -1})
	c.initialize(nil)
	got := make(chan string, 256)
	c.mu.Lock()
	c.hook = func(n note) {
		if n.method == protocol.MethodTextDocumentPublishDiagnostics {
			var p publishParams
			if json.Unmarshal(n.params, &p) == nil {
				got <- string(p.URI)
			}
		}
	}
	c.mu.Unlock()
	// Notifications are recorded by the client too; the hook alone is
	// enough here, so drop the record to measure the server.
	c.discard = true
	for i := 0; i < 200; i++ {
		c.open(fmt.Sprintf("file:///mem/p%d.md", i), benchPrompt(1000, i))
	}
	seen := map[string]bool{}
	for len(seen) < 200 {
		select {
		case u := <-got:
			seen[u] = true
		case <-time.After(60 * time.Second):
			tb.Fatalf("only %d of 200 documents got diagnostics", len(seen))
		}
	}
	// Build every document's navigation index too, as an editor session
	// with hovers and lenses would.
	for i := 0; i < 200; i++ {
		var lenses []protocol.CodeLens
		c.mustCall(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": fmt.Sprintf("file:///mem/p%d.md", i)}}, &lenses)
		if len(lenses) < 10 {
			tb.Fatalf("document %d: %d lenses", i, len(lenses))
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _ = rssMB()
	// Shut the server down so that repeated benchmark iterations measure
	// one server each, not the sum of all of them.
	c.shutdown()
	return rss, float64(ms.HeapAlloc) / (1 << 20), baseRSS
}

// BenchmarkRequestAfterChange measures requests sent right after a
// didChange of a 10,000-line prompt (debounce off), which parse the new
// text and build its navigation index if the background analysis has
// not stored it yet. It reports p50/p99 per method and the ratio to a
// bare parse of the same kind of edit, measured in the same run.
func BenchmarkRequestAfterChange(b *testing.B) {
	const n = 10000
	variant := 1
	next := func() string { variant++; return benchPrompt(n, variant) }
	base := baseline(next, func(text []byte) { parse.Parse("/bench/big.md", text) })
	text := next()
	line := strings.Count(text[:strings.Index(text, `tools.add({"fetch"})`)], "\n")
	uri := "file:///bench/big.md"
	pos := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line, "character": 8}}
	doc := map[string]any{"textDocument": map[string]any{"uri": uri}}
	for _, m := range []struct {
		name, method string
		params       any
	}{
		{"hover", protocol.MethodTextDocumentHover, pos},
		{"completion", protocol.MethodTextDocumentCompletion, pos},
		{"codeLens", protocol.MethodTextDocumentCodeLens, doc},
		{"documentSymbol", protocol.MethodTextDocumentDocumentSymbol, doc},
	} {
		b.Run(m.name, func(b *testing.B) {
			c := startServer(b, options{Debounce: -1})
			c.initialize(nil)
			c.open(uri, next())
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				quoted, _ := json.Marshal(next())
				frame := didChangeFrame(uri, int32(i+2), quoted)
				b.StartTimer()
				if _, err := c.raw.Write(frame); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				var res json.RawMessage
				c.mustCall(m.method, m.params, &res)
				lat = append(lat, time.Since(t0))
				if len(res) < 10 {
					b.Fatalf("%s: empty result %s", m.name, res)
				}
			}
			p50, p99 := percentile(lat, 50), percentile(lat, 99)
			b.ReportMetric(ms(p50), "p50-ms")
			b.ReportMetric(ms(p99), "p99-ms")
			b.ReportMetric(ms(base), "bare-parse-ms")
			b.ReportMetric(float64(p50)/float64(base), "p50/bare-parse")
		})
	}
}
