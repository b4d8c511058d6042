package lsp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/analysis/cores"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// publishParams is PublishDiagnosticsParams with a signed version that is
// always present (the library's is an omitempty uint32).
type publishParams struct {
	URI         protocol.DocumentURI  `json:"uri"`
	Version     int32                 `json:"version"`
	Diagnostics []protocol.Diagnostic `json:"diagnostics"`
}

// scheduleDiagnostics (re)starts the analysis of d, cancelling the
// previous one, and publishes its diagnostics once delay has passed. The
// analysis does not wait for the delay: it starts at once (after half the
// delay inside a burst of changes) when a core would otherwise idle
// (slots), so that a pause in typing finds the diagnostics ready. Called
// with s.mu held.
func (s *server) scheduleDiagnostics(d *document, delay time.Duration) {
	if isTestDoc(d.uri) {
		s.scheduleTestDiagnostics(d, delay)
		return
	}
	pin := s.pinDoc(d)
	pull := s.pullDiagnostics()
	s.startDiagnostics(d, delay, true, "diagnostics", func(ctx context.Context, dueAt time.Time) func() {
		// At most GOMAXPROCS analyses run at once: opening hundreds of
		// documents together (a restored session) must not parse them all
		// in parallel and spike memory. Until dueAt the analysis waits
		// behind every analysis already due.
		if testHookQueued != nil {
			testHookQueued(ctx, pin.uri, pin.version)
		}
		if !s.analysisSlots.acquire(ctx, dueAt) {
			return nil
		}
		if testHookSlot != nil {
			testHookSlot(pin.uri, pin.version)
		}
		// work counts the analysis until its analyzers have returned: a
		// cancelled one returns at once, and the slot is given back only
		// when the analyzers it had started are done, so they never run
		// beside the analyses of the slots' next holders.
		var work sync.WaitGroup
		snap := func() *snapshot {
			defer func() {
				work.Wait()
				s.analysisSlots.release()
			}()
			// The parse counts as a busy core (analysis/cores), as the
			// analysis does, so no other analysis's work ahead takes it.
			release := cores.Hold()
			snap := s.ready(pin)
			release()
			if ctx.Err() == nil && snap.isPrompt {
				s.analyse(analysis.WithWork(ctx, &work), snap)
				// Budget findings need the prose budgets only when a
				// model catalog says how large each model's context is.
				if len(snap.models) > 0 && snap.prompt != nil {
					snap.proseBudgets()
				}
				if _, ok := snap.findings.peek(); ok && testHookAnalysed != nil {
					testHookAnalysed(snap.uri, snap.version)
				}
			}
			return snap
		}()
		if _, ok := snap.findings.peek(); snap.isPrompt && !ok {
			return nil // cancelled
		}
		// Converted outside the lock; published (queued) under it.
		var diags []protocol.Diagnostic
		if !pull {
			diags = diagnosticsOf(snap)
		}
		return func() {
			if snap.parsePanic != "" {
				s.logger.Printf("parser panic on %s: %s", snap.uri, snap.parsePanic)
			}
			d.prompt = snap.isPrompt
			if !snap.isPrompt && !d.published {
				return // other Markdown gets nothing
			}
			if pull {
				return // the client asks (textDocument/diagnostic)
			}
			d.published = len(diags) > 0
			s.publish(snap.uri, snap.version, diags)
		}
	})
}

// diagnosticsOf assembles a document version's diagnostics: the
// analysis's findings and the context-budget findings. It is the one
// assembly for pushed, pulled and workspace diagnostics and for closed
// workspace files. The snapshot's findings and budgets must be ready
// (analyse, proseBudgets).
func diagnosticsOf(snap *snapshot) []protocol.Diagnostic {
	if !snap.isPrompt {
		return []protocol.Diagnostic{}
	}
	findings, _ := snap.findings.peek()
	diags := toDiagnostics(snap.uri, snap.file, findings)
	return append(diags, toDiagnostics(snap.uri, snap.file, budgetFindings(snap))...)
}

// startDiagnostics cancels the diagnostics job running for d and starts
// job in the background; what it returns is published once delay has
// passed (unless d changes first). An early job starts at once, or
// after half the delay inside a burst of changes, and is told when it is
// due (dueAt; zero when it is due at once); another starts when delay
// has passed. job runs outside s.mu and returns what to publish, or nil;
// that runs under s.mu and only while the job is still d's latest, d is
// open and the server runs. Called with s.mu held.
func (s *server) startDiagnostics(d *document, delay time.Duration, early bool, name string, job func(ctx context.Context, dueAt time.Time) (publish func())) {
	d.cancelDiagnostics()
	d.gen++
	gen := d.gen
	ctx, cancel := context.WithCancel(s.ctx)
	d.cancel = cancel
	uri := d.uri
	// An early job starts at once after a pause. A change that follows
	// the last within the delay is part of a burst (typing faster than
	// the delay): its job starts once the document has been quiet for
	// half the delay, at most maxSettle, so a burst is analysed about
	// once, not once per keystroke.
	var dueAt, startAt time.Time
	if delay > 0 {
		now := time.Now()
		dueAt = now.Add(delay)
		switch {
		case !early:
			startAt = dueAt
		case now.Sub(d.scheduledAt) < delay:
			startAt = now.Add(min(delay/2, maxSettle))
		}
		d.scheduledAt = now
	}
	s.goBackground(name, func() {
		defer cancel()
		if !sleepUntil(ctx, startAt) {
			return
		}
		publish := job(ctx, dueAt)
		if publish == nil || !sleepUntil(ctx, dueAt) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		// Publishing (queueing, outbox) under the lock orders it against
		// didClose's clearing publish: a stale result can never land
		// after the clear.
		if d.gen != gen || s.docs[uriKey(uri)] != d || s.state != stateRunning {
			return
		}
		publish()
	})
}

// maxSettle bounds how long the analysis of a change inside a burst
// waits for the next change before it starts.
var maxSettle = 50 * time.Millisecond

// sleepUntil waits until t (at once when t is zero or past) and reports
// whether ctx was still live then.
func sleepUntil(ctx context.Context, t time.Time) bool {
	if wait := time.Until(t); wait > 0 {
		tm := time.NewTimer(wait)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// publish sends diagnostics; diags is never nil.
func (s *server) publish(uri protocol.DocumentURI, version int32, diags []protocol.Diagnostic) {
	if diags == nil {
		diags = []protocol.Diagnostic{}
	}
	s.notify(protocol.MethodTextDocumentPublishDiagnostics, &publishParams{URI: uri, Version: version, Diagnostics: diags})
}

// testHookAnalysed sees each version the diagnostics job finished
// analysing, before it is published (the typing benchmark's clock).
var testHookAnalysed func(uri protocol.DocumentURI, version int32)

// testHookQueued sees each diagnostics job before it asks for an analysis
// slot; a test may hold it there (the version stays pending) until ctx
// ends.
var testHookQueued func(ctx context.Context, uri protocol.DocumentURI, version int32)

// testHookSlot sees each diagnostics job as it takes an analysis slot.
var testHookSlot func(uri protocol.DocumentURI, version int32)

// testHookAnalysis lets a test make one document's analysis slow.
var testHookAnalysis func(protocol.DocumentURI)

// analyse makes snap's findings ready. It is the one place that calls
// into the analysis; it runs outside the server lock and stops when ctx
// is cancelled, leaving the findings to the next caller.
func (s *server) analyse(ctx context.Context, snap *snapshot) {
	if !snap.isPrompt {
		return
	}
	snap.findings.get(func() (ds []analysis.Diagnostic, ok bool) {
		defer func() {
			if r := recover(); r != nil {
				s.logger.Printf("analysis panic on %s: %v", snap.uri, r)
				ds = []analysis.Diagnostic{{Severity: analysis.Error, Code: analysis.CodeInternal,
					Message: fmt.Sprintf("forge-lsp: the analysis crashed on this file (%v); please report it", r)}}
				ok = true
			}
		}()
		if snap.tooLarge {
			// Not parsed: the one finding goes through the driver, which
			// applies the configured severity and forge:ignore.
			tooLarge := checker.Supplied(checker.TooLarge, func(*analysis.Pass) []analysis.Diagnostic {
				return []analysis.Diagnostic{{
					Span: source.Span{Start: 0, End: 0},
					Code: "too-large",
					Message: fmt.Sprintf("file is %d bytes; forge-lsp analyses files up to %d bytes, so this one gets no diagnostics or features",
						len(snap.file.Content), s.opts.MaxAnalyzedSize),
				}}
			})
			ds, err := analysis.Run(ctx, &parse.Prompt{File: snap.file}, []*analysis.Analyzer{tooLarge}, snap.inputs().config)
			return ds, err == nil
		}
		if testHookAnalysis != nil {
			testHookAnalysis(snap.uri)
		}
		ds, err := runAnalysis(ctx, snap)
		if err != nil {
			return nil, false // cancelled: a newer version or the request is gone
		}
		return ds, true
	})
}

// lspRange converts a byte span to an LSP range (UTF-16 columns).
func lspRange(f *source.File, sp source.Span) protocol.Range {
	return protocol.Range{Start: lspPos(f, sp.Start), End: lspPos(f, sp.End)}
}

func lspPos(f *source.File, off int) protocol.Position {
	l, c := f.LSPPosition(off)
	return protocol.Position{Line: l, Character: c}
}

// offsetOf converts an LSP position to a byte offset.
func offsetOf(f *source.File, p protocol.Position) int {
	return f.LSPOffset(p.Line, p.Character)
}
