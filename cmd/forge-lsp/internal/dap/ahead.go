package dap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	godap "github.com/google/go-dap"
)

// Stepping back re-runs the prompt from its start to the stop before
// (whatif.go). A user who steps back once usually goes on stepping back,
// so each step back starts the next ones' re-runs ahead of time: runs the
// client does not see yet (their events held back, their traces kept in
// memory, their model and tool calls answered from the tape and never
// live) that fast-forward to the stops before this one and wait there,
// one for each of the next aheadRuns step backs. A run ahead for the step
// back after the next one has the time of a whole stop to reach its
// target, so a user stepping back finds it standing there. The next
// stepBack adopts the first when nothing it was started from has
// changed: the target, the edits it makes on the way, the breakpoints and
// the prompt's text; the others stay, and one more starts. Otherwise they
// are all dropped and the re-run starts then, as it would without them.
// Either way the stop is reached by re-executing the prompt from the
// recording (docs/debugging.md#what-if).

// aheadRuns is how many step backs have their runs started ahead of time.
// Each stands at its stop with its Lua state until adopted or dropped.
const aheadRuns = 2

// backPlan is where a step back re-runs to, and with what.
type backPlan struct {
	target  pointID
	tseq    int
	reason  string
	applyAt map[pointID][]*edit
	history []stopRec
	kept    []*edit
}

// key identifies what a run ahead was started from.
func (p *backPlan) key() string {
	k := fmt.Sprintf("%s#%d@%d/%s/%d", p.target.key, p.target.n, p.tseq, p.reason, len(p.history))
	for _, e := range p.kept {
		k += fmt.Sprintf("/%p", e)
	}
	return k
}

// backPlan works out d's step back (to the previous stop, or with
// toBreakpoint to the previous breakpoint stop, else the run's first
// point): edits made after the target are undone. Needs s.mu; d is
// stopped with a history.
func (d *debugRun) backPlan(toBreakpoint bool) *backPlan {
	cur := len(d.history) - 1
	j := -1
	for i := cur - 1; i >= 0; i-- {
		if !toBreakpoint || isBreakpoint(d.history[i].reason) {
			j = i
			break
		}
	}
	p := &backPlan{reason: "step", applyAt: map[pointID][]*edit{}}
	switch {
	case j >= 0:
		p.target, p.tseq = d.history[j].id, d.history[j].seq
		if toBreakpoint {
			p.reason = d.history[j].reason
		}
	default:
		// Nothing before: back to where the run began.
		p.target, p.tseq, p.reason = d.first, 1, "entry"
	}
	for _, e := range d.edits {
		if e.seq <= p.tseq {
			p.applyAt[e.at] = append(p.applyAt[e.at], e)
			p.kept = append(p.kept, e)
		}
	}
	if j > 0 {
		// Shared, not copied: a history is only ever appended to, and
		// the cap makes the next append copy.
		p.history = d.history[:j:j]
	}
	return p
}

// aheadState is what a run started ahead of time holds until it is
// adopted or dropped; guarded by server.mu.
type aheadState struct {
	key  string
	text []byte
	// held are the messages the run would have sent, in order.
	held []godap.Message
	// adopted is closed when the run becomes the current one.
	adopted chan struct{}
	// target is the stop the run stops at.
	target stopRec
	trace  *heldTrace
	// after is the run as it will be at its target, to plan the step
	// back after it from: its history, edits, first point and text.
	after *debugRun
}

// emit sends m for d, or holds it while d is a run ahead.
func (d *debugRun) emit(m godap.Message) {
	s := d.s
	s.mu.Lock()
	if a := d.ahead; a != nil {
		a.held = append(a.held, m)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.send(m)
}

// output is server.output for d's run.
func (d *debugRun) output(category, text string, line int) {
	d.emit(outputEvent(d.src, category, text, line))
}

// speculate starts, when d is the current run and stands at a stop it
// stepped back to, the runs ahead for the step backs after it. A run
// ahead, or one dropped or replaced, starts none: runs ahead are started
// from the current run only, with the breakpoints and text it has.
// Needs s.mu not held.
func (s *server) speculate(d *debugRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d != s.cur || d.ahead != nil || !d.stopped || d.sess == nil || len(d.history) == 0 {
		return
	}
	s.speculateFrom(d, d.sess.Carry())
}

// speculateFrom starts runs ahead for d's step back and the ones after
// it, answered from prior, until aheadRuns of them stand ready or are on
// their way. The runs ahead already there come first: the next one starts
// from where the last of them will be. Needs s.mu.
func (s *server) speculateFrom(d *debugRun, prior *gateway.Tape) {
	if s.launch == nil || s.launch.NoDebug {
		return
	}
	if n := len(s.aheads); n > 0 {
		last := s.aheads[n-1]
		d, prior = last.ahead.after, last.prior
	}
	for len(s.aheads) < aheadRuns && d != nil && d.text != nil && prior != nil {
		a := s.startAhead(d, prior)
		d = a.ahead.after
	}
}

// startAhead starts a run ahead for d's step back, answered from prior.
// Needs s.mu.
func (s *server) startAhead(d *debugRun, prior *gateway.Tape) *debugRun {
	p := d.backPlan(false)
	a := s.newRun()
	target := stopRec{id: p.target, seq: p.tseq, reason: p.reason}
	after := &debugRun{history: append(slices.Clip(p.history), target), edits: p.kept, first: d.first, text: d.text}
	a.ahead = &aheadState{key: p.key(), text: d.text, adopted: make(chan struct{}), target: target, after: after}
	if a.args.Trace != "" {
		a.ahead.trace = &heldTrace{}
	}
	a.prior = prior
	a.plan = &plan{target: p.target, reason: p.reason, back: true}
	a.applyAt, a.history, a.edits = p.applyAt, p.history, p.kept
	a.arrival = after.history
	s.aheads = append(s.aheads, a)
	s.tell("started")
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	s.running.Add(1)
	go a.run(ctx)
	return a
}

// isBreakpoint reports whether a stop's reason is a breakpoint of any kind.
func isBreakpoint(reason string) bool { return strings.Contains(reason, "breakpoint") }

// dropAheadLocked cancels the runs ahead, if any. Needs s.mu.
func (s *server) dropAheadLocked() {
	s.aheadGen++
	for _, a := range s.aheads {
		a.quiet, a.replaced = true, true
		a.cancel()
		s.tell("dropped")
	}
	s.aheads = nil
}

// tell reports to a test what became of a run ahead.
func (s *server) tell(what string) {
	if s.opts.ahead != nil {
		s.opts.ahead(what)
	}
}

func (s *server) dropAhead() {
	s.mu.Lock()
	s.dropAheadLocked()
	s.mu.Unlock()
}

// takeAhead returns the first run ahead when it was started for p and
// the prompt's text is still the one it runs; the others stay. Else it
// drops them all and returns nil. Needs s.mu not held.
func (s *server) takeAhead(p *backPlan) *debugRun {
	s.mu.Lock()
	if len(s.aheads) == 0 {
		s.mu.Unlock()
		return nil
	}
	a := s.aheads[0]
	s.mu.Unlock()
	src, err := s.readPrompt(a.args.Program)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.aheads) == 0 || s.aheads[0] != a {
		// Dropped meanwhile.
		return nil
	}
	if err != nil || a.ended || a.ahead.key != p.key() || !bytes.Equal(src, a.ahead.text) || s.cur == nil {
		s.dropAheadLocked()
		return nil
	}
	s.aheads = slices.Delete(s.aheads, 0, 1)
	return a
}

// adopt makes a the current run in place of the stopped one. The returned
// function, called once the request's response is sent, lets a's held
// messages out and its trace into the trace file, then cancels the run a
// replaced and starts the next run ahead: the client hears of the stop
// before either takes a core.
func (s *server) adopt(a *debugRun) func() {
	s.mu.Lock()
	old := s.cur
	if old != nil {
		old.replaced, old.quiet = true, true
	}
	s.cur = a
	s.runs++
	a.runNo = s.runs
	s.tell("adopted")
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		st := a.ahead
		a.ahead = nil
		// Under s.mu, so that nothing a sends from now on overtakes what
		// it held.
		for _, m := range st.held {
			s.send(m)
		}
		close(st.adopted)
		gen := s.aheadGen
		if old == nil {
			s.speculateFrom(st.after, a.prior)
		}
		s.mu.Unlock()
		if st.trace != nil {
			st.trace.commit(a.args.Trace, a.runNo)
		}
		if old == nil {
			return
		}
		// The run a replaced ends first, then the next run ahead starts:
		// one run in the background at a time leaves the client's
		// reading of the stop a core. The runs ahead there already give
		// it the time.
		old.cancel()
		go func() {
			<-old.done
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.cur != a || s.aheadGen != gen {
				// Stepped back again (that step starts its own), or the
				// runs ahead were dropped.
				return
			}
			// The run for the step back after the last one ahead starts
			// from what that run will have at its stop (a may not be at
			// its own yet).
			s.speculateFrom(st.after, a.prior)
		}()
	}
}

// gate holds a run ahead that would make a live call until it is adopted
// (then the call goes out as the current run's) or dropped.
func (a *aheadState) gate(ctx context.Context) error {
	select {
	case <-a.adopted:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// heldTrace is a run ahead's trace: in memory until the run is adopted,
// then in the trace file, the trace of the run before kept beside it.
type heldTrace struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	f      *os.File
	w      *bufio.Writer
	closed bool
}

func (h *heldTrace) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w != nil {
		return h.w.Write(p)
	}
	return h.buf.Write(p)
}

// commit moves the trace to path (run runNo of the launch).
func (h *heldTrace) commit(path string, runNo int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if runNo > 1 {
		_ = os.Rename(path, keptTrace(path, runNo-1))
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	h.f, h.w = f, bufio.NewWriter(f)
	_, _ = h.w.Write(h.buf.Bytes())
	h.buf = bytes.Buffer{}
	if h.closed {
		// The run ended while it was being adopted.
		_ = h.w.Flush()
		_ = f.Close()
		h.w = nil
	}
}

// Close flushes and closes the trace file, if the run was adopted.
func (h *heldTrace) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.w == nil {
		return nil
	}
	err := h.w.Flush()
	if cerr := h.f.Close(); err == nil {
		err = cerr
	}
	h.w = nil
	return err
}

var _ io.WriteCloser = (*heldTrace)(nil)
