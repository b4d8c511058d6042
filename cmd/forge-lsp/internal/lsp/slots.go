package lsp

import (
	"context"
	"slices"
	"sync"
	"time"
)

// slots shares the analysis slots (one per CPU: analysis is CPU-bound)
// between two kinds of work. Due work is an edit whose diagnostics
// delay has passed, or a request-driven or opening analysis: someone is
// waiting for it. Early work is the analysis of an edit still inside its
// delay (and the workspace's closed files): it runs while cores would
// otherwise idle, so that the delay hides it, but never ahead of due
// work. A freed slot goes to the longest-waiting due job, else to the
// longest-waiting early one; an early waiter whose delay passes joins the
// due queue then. Waiting is first come, first served within each queue.
type slots struct {
	mu    sync.Mutex
	free  int // slots nobody holds; non-zero only while nobody waits
	due   []*slotWaiter
	early []*slotWaiter
	// moved, when set (tests), is called after a job joins a queue or
	// moves to the due queue.
	moved func()
}

// slotWaiter is one job waiting for a slot; granted closes when it has
// one.
type slotWaiter struct {
	granted chan struct{}
	ok      bool // set with granted closed, under slots.mu
}

func newSlots(n int) *slots { return &slots{free: max(1, n)} }

// acquire waits for a slot and reports whether it got one (false when
// ctx ended first; then it holds none). The job is due from dueAt on:
// a zero dueAt, or one already past, makes it due at once.
func (s *slots) acquire(ctx context.Context, dueAt time.Time) bool {
	w := &slotWaiter{granted: make(chan struct{})}
	wait := time.Until(dueAt)
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return true
	}
	var promote <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		promote = t.C
		s.early = append(s.early, w)
	} else {
		s.due = append(s.due, w)
	}
	s.mu.Unlock()
	if s.moved != nil {
		s.moved()
	}
	for {
		select {
		case <-w.granted:
			return true
		case <-promote:
			promote = nil
			s.mu.Lock()
			if i := slices.Index(s.early, w); i >= 0 {
				s.early = slices.Delete(s.early, i, i+1)
				s.due = append(s.due, w)
			}
			s.mu.Unlock()
			if s.moved != nil {
				s.moved()
			}
		case <-ctx.Done():
			s.mu.Lock()
			if w.ok {
				// Granted as ctx ended: hand the slot on.
				s.mu.Unlock()
				s.release()
				return false
			}
			if i := slices.Index(s.due, w); i >= 0 {
				s.due = slices.Delete(s.due, i, i+1)
			} else if i := slices.Index(s.early, w); i >= 0 {
				s.early = slices.Delete(s.early, i, i+1)
			}
			s.mu.Unlock()
			return false
		}
	}
}

// release gives a slot back: to the first due waiter, else the first
// early one, else to the free count.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w *slotWaiter
	switch {
	case len(s.due) > 0:
		w, s.due = s.due[0], s.due[1:]
	case len(s.early) > 0:
		w, s.early = s.early[0], s.early[1:]
	default:
		s.free++
		return
	}
	w.ok = true
	close(w.granted)
}
