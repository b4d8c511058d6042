package lsp

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/cmd/internal/proctime"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"go.lsp.dev/protocol"
)

func init() {
	// -long runs the large sizes; a shared test helper may define it first.
	if flag.Lookup("long") == nil {
		flag.Bool("long", false, "run slow tests and benchmarks at full size")
	}
}

// longRun reports whether -long was given.
func longRun() bool {
	f := flag.Lookup("long")
	return f != nil && f.Value.String() == "true"
}

// typingShape is a use-shaped load: docs open prompts of lines lines,
// each edited edits times at uniformly random lines by its own client
// goroutine, all at once.
type typingShape struct {
	docs, lines, edits int
}

// typingSmoke is the size CI runs (TestTyping); typingFull is the
// issue's shape, run by BenchmarkTyping under -long.
var (
	typingSmoke = typingShape{docs: 3, lines: 1000, edits: 12}
	typingFull  = typingShape{docs: 20, lines: 10000, edits: 300}
)

// typingResult is what a typing run measured.
type typingResult struct {
	// analysed is, per edit, the time from sending it to the end of its
	// analysis, less the debounce; published is the time from sending it
	// to receiving its diagnostics, debounce included.
	analysed, published []time.Duration
	// done is, per edit, the time from sending it to the end of its
	// analysis, the debounce not subtracted: the analysis runs inside
	// the delay when a core is free, so this is how long it took.
	done []time.Duration
	// delivered is, per edit, the time from the later of its analysis
	// done and the end of the debounce to the client's receipt of its
	// diagnostics: the publish's wait for the scheduler, the lock and
	// the stream.
	delivered []time.Duration
	// queued is, per edit, the part of analysed spent waiting for an
	// analysis slot (after the debounce); working the rest: parsing and
	// analysing that version.
	queued, working []time.Duration
	// cpu is the process's CPU time (user and system) over the edits,
	// divided by their number: the whole process, the clients included.
	cpu time.Duration
	// gcShare is the part of the process's CPU time the garbage collector
	// spent over the edits (runtime/metrics' estimate).
	gcShare float64
	// final is each document's last text and the diagnostics published
	// for it.
	final     map[string]string
	finalDiag map[string][]protocol.Diagnostic
	// server is each document's text as the server holds it at the end.
	server map[string]string
	rss    float64
}

// runTyping opens shape.docs prompts in one server (debounce delay) and
// runs one client goroutine per document. Each types: an edit at the end
// of a uniformly random line (a space added, and the next edit removes
// it again, so the prompt stays well formed), then waits for that
// version's diagnostics before the next edit, as a user pausing would.
func runTyping(tb testing.TB, shape typingShape, delay time.Duration) typingResult {
	type key struct {
		uri     string
		version int32
	}
	var analysedAt, slotAt sync.Map // key -> time.Time
	testHookAnalysed = func(u protocol.DocumentURI, v int32) { analysedAt.Store(key{string(u), v}, time.Now()) }
	testHookSlot = func(u protocol.DocumentURI, v int32) { slotAt.Store(key{string(u), v}, time.Now()) }
	tb.Cleanup(func() { testHookAnalysed, testHookSlot = nil, nil })

	var srv *server
	testHookServer = func(s *server) { srv = s }
	c := startServer(tb, options{Debounce: delay})
	c.initialize(nil)
	testHookServer = nil // initialize's reply means serve has called it
	pubs := make(map[string]chan publishParams, shape.docs)
	uris := make([]string, shape.docs)
	for i := range uris {
		uris[i] = fmt.Sprintf("file:///typing/p%d.md", i)
		pubs[uris[i]] = make(chan publishParams, 4*shape.edits+16)
	}
	c.mu.Lock()
	c.discard = true // the hook below sees every publish; keep no record
	c.hook = func(n note) {
		if n.method != protocol.MethodTextDocumentPublishDiagnostics {
			return
		}
		var p publishParams
		if json.Unmarshal(n.params, &p) == nil {
			if ch := pubs[string(p.URI)]; ch != nil {
				ch <- p
			}
		}
	}
	c.mu.Unlock()
	await := func(uri string, v int32) (publishParams, error) {
		deadline := time.After(120 * time.Second) // failure bound only
		for {
			select {
			case p := <-pubs[uri]:
				if p.Version == v {
					return p, nil
				}
			case <-deadline:
				return publishParams{}, fmt.Errorf("%s: no diagnostics for version %d", uri, v)
			}
		}
	}
	texts := make([]string, shape.docs)
	for i, u := range uris {
		texts[i] = benchPrompt(shape.lines, i+1)
		c.open(u, texts[i])
	}
	for _, u := range uris {
		if _, err := await(u, 1); err != nil {
			tb.Fatal(err)
		}
	}

	res := typingResult{final: map[string]string{}, finalDiag: map[string][]protocol.Diagnostic{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	cpu0 := proctime.CPU()
	gc0, all0 := gcCPU()
	errs := make(chan error, shape.docs)
	for i, u := range uris {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 34))
			lines := strings.SplitAfter(texts[i], "\n")
			var last publishParams
			typed := -1 // the line holding the space typed last, or -1
			for e := 0; e < shape.edits; e++ {
				v := int32(e + 2)
				var change map[string]any
				if typed < 0 {
					l := r.IntN(len(lines))
					n := len(strings.TrimRight(lines[l], "\r\n"))
					change = map[string]any{"range": rng(uint32(l), uint32(n), uint32(l), uint32(n)), "text": " "}
					lines[l] = lines[l][:n] + " " + lines[l][n:]
					typed = l
				} else {
					l := typed
					n := len(strings.TrimRight(lines[l], "\r\n"))
					change = map[string]any{"range": rng(uint32(l), uint32(n-1), uint32(l), uint32(n)), "text": ""}
					lines[l] = lines[l][:n-1] + lines[l][n:]
					typed = -1
				}
				t0 := time.Now()
				if err := c.conn.Notify(context.Background(), protocol.MethodTextDocumentDidChange, map[string]any{
					"textDocument":   map[string]any{"uri": u, "version": v},
					"contentChanges": []any{change},
				}); err != nil {
					errs <- err
					return
				}
				p, err := await(u, v)
				if err != nil {
					errs <- err
					return
				}
				now := time.Now()
				last = p
				mu.Lock()
				res.published = append(res.published, now.Sub(t0))
				if at, ok := analysedAt.Load(key{u, v}); ok {
					at := at.(time.Time)
					res.analysed = append(res.analysed, max(0, at.Sub(t0)-delay))
					res.done = append(res.done, at.Sub(t0))
					res.delivered = append(res.delivered, now.Sub(t0)-max(at.Sub(t0), delay))
					if sl, ok := slotAt.Load(key{u, v}); ok {
						sl := sl.(time.Time)
						res.queued = append(res.queued, max(0, sl.Sub(t0)-delay))
						res.working = append(res.working, at.Sub(sl))
					}
				}
				mu.Unlock()
			}
			mu.Lock()
			res.final[u] = strings.Join(lines, "")
			res.finalDiag[u] = last.Diagnostics
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.cpu = (proctime.CPU() - cpu0) / time.Duration(max(1, len(res.published)))
	if gc1, all1 := gcCPU(); all1 > all0 {
		res.gcShare = (gc1 - gc0) / (all1 - all0)
	}
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	res.rss, _ = rssMB()
	res.server = map[string]string{}
	srv.mu.Lock()
	for _, u := range uris {
		if d := srv.docs[uriKey(protocol.DocumentURI(u))]; d != nil {
			res.server[u] = string(d.text)
		}
	}
	srv.mu.Unlock()
	return res
}

// gcCPU returns the runtime's estimates of the CPU seconds spent by the
// garbage collector and in total (runtime/metrics).
func gcCPU() (gc, total float64) {
	ss := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(ss)
	if ss[0].Value.Kind() != metrics.KindFloat64 || ss[1].Value.Kind() != metrics.KindFloat64 {
		return 0, 0
	}
	return ss[0].Value.Float64(), ss[1].Value.Float64()
}

// TestTyping runs the typing load at smoke size: every edit's version is
// analysed and published, the server ends with each document's text as
// the client has it, and each document's last diagnostics are those of a
// fresh check of that text.
func TestTyping(t *testing.T) {
	res := runTyping(t, typingSmoke, 5*time.Millisecond)
	if n := typingSmoke.docs * typingSmoke.edits; len(res.published) != n || len(res.analysed) != n {
		t.Fatalf("%d edits published, %d analysed; want %d each", len(res.published), len(res.analysed), n)
	}
	for uri, text := range res.final {
		if res.server[uri] != text {
			t.Errorf("%s: the server's text differs from the client's after %d edits", uri, typingSmoke.edits)
		}
		want := checker.Check(parse.Parse(fileName(protocol.DocumentURI(uri)), []byte(text)), nil)
		if got := res.finalDiag[uri]; len(got) != len(want) {
			t.Errorf("%s: %d diagnostics published for the last version, a fresh check finds %d", uri, len(got), len(want))
		}
	}
}

// BenchmarkTyping is the use-shaped benchmark: 20 clients each typing 300
// edits at uniformly random lines of its own 10,000-line prompt, all at
// once, into one server with the default debounce (under -long; the smoke
// size otherwise). It reports p50/p99 from an edit to the end of its
// analysis (debounce excluded) and to its published diagnostics
// (debounce included), and the process's resident memory.
func BenchmarkTyping(b *testing.B) {
	shape := typingSmoke
	if longRun() {
		shape = typingFull
	}
	b.Logf("%d documents x %d lines, %d edits each", shape.docs, shape.lines, shape.edits)
	for i := 0; i < b.N; i++ {
		res := runTyping(b, shape, defaultDebounce)
		b.ReportMetric(ms(percentile(res.analysed, 50)), "analysed-p50-ms")
		b.ReportMetric(ms(percentile(res.analysed, 99)), "analysed-p99-ms")
		b.ReportMetric(ms(percentile(res.published, 50)), "published-p50-ms")
		b.ReportMetric(ms(percentile(res.published, 99)), "published-p99-ms")
		b.ReportMetric(ms(percentile(res.done, 50)), "done-p50-ms")
		b.ReportMetric(ms(percentile(res.done, 99)), "done-p99-ms")
		b.ReportMetric(ms(percentile(res.delivered, 99)), "delivered-p99-ms")
		b.ReportMetric(ms(percentile(res.queued, 99)), "queued-p99-ms")
		b.ReportMetric(ms(percentile(res.working, 99)), "working-p99-ms")
		b.ReportMetric(ms(res.cpu), "cpu-ms/edit")
		b.ReportMetric(100*res.gcShare, "gc-cpu-%")
		b.ReportMetric(res.rss, "rss-MB")
	}
}

// BenchmarkTypingBurst types bursts faster than the debounce into one
// prompt (10,000 lines under -long, 1,000 otherwise): 40 keystrokes 30 ms
// apart at one place, then a pause until that version's diagnostics, five
// times. It reports the analyses that finished per burst (2: the first
// keystroke's, which came after a pause, and the last's; a server that
// analysed every keystroke would finish 40) and the process's CPU time
// per keystroke: what typing costs the machine, not only the latency.
func BenchmarkTypingBurst(b *testing.B) {
	lines := 1000
	if longRun() {
		lines = 10000
	}
	const bursts, keys, gap = 5, 40, 30 * time.Millisecond
	uri := "file:///typing/burst.md"
	var analyses atomic.Int64
	testHookAnalysed = func(u protocol.DocumentURI, v int32) {
		if string(u) == uri {
			analyses.Add(1)
		}
	}
	b.Cleanup(func() { testHookAnalysed = nil })
	for i := 0; i < b.N; i++ {
		c := startServer(b, options{Debounce: defaultDebounce})
		c.initialize(nil)
		c.open(uri, benchPrompt(lines, 1))
		_, seen := c.diagnosticsFor(uri, 1, 0)
		analyses.Store(0)
		cpu0 := proctime.CPU()
		v := int32(1)
		line := uint32(lines / 2)
		for range bursts {
			for k := range keys {
				v++
				col := uint32(k)
				if err := c.conn.Notify(context.Background(), protocol.MethodTextDocumentDidChange, map[string]any{
					"textDocument":   map[string]any{"uri": uri, "version": v},
					"contentChanges": []any{map[string]any{"range": rng(line, col, line, col), "text": "x"}},
				}); err != nil {
					b.Fatal(err)
				}
				time.Sleep(gap) // the typist's pace
			}
			_, seen = c.diagnosticsFor(uri, v, seen+1)
		}
		b.ReportMetric(float64(analyses.Load())/bursts, "analyses/burst")
		b.ReportMetric(ms(proctime.CPU()-cpu0)/(bursts*keys), "cpu-ms/keystroke")
	}
}
