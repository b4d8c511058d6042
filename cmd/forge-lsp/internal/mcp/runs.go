package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Run statuses (docs/mcp.md#results).
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// RunResult is the structured content of run_prompt and check_run, the
// shape upstream's server returns: a completed run carries value, a
// failed one error, a running one neither.
type RunResult struct {
	RunID     string  `json:"run_id"`
	Prompt    string  `json:"prompt"`
	Status    string  `json:"status"`
	Value     *string `json:"value"`
	Turns     int     `json:"turns"`
	ElapsedMS int64   `json:"elapsed_ms"`
	Error     *string `json:"error"`
}

// text is the text block beside the structured content: the value, the
// error, or how to collect a run still going.
func (r RunResult) text() string {
	switch {
	case r.Value != nil:
		return *r.Value
	case r.Error != nil:
		return *r.Error
	}
	return fmt.Sprintf("%s is still running as run %s. Collect it with check_run.", r.Prompt, r.RunID)
}

// registry admits runs into a fixed number of slots and keeps every run
// collectable while it goes and for retain after it ends.
type registry struct {
	slots            chan struct{}
	admissionTimeout time.Duration
	replyDeadline    time.Duration
	retain           time.Duration

	mu   sync.Mutex
	runs map[string]*record
}

// record is one run the registry tracks.
type record struct {
	id, prompt string
	started    time.Time
	cancel     context.CancelFunc
	done       chan struct{}
	// Set before done closes.
	result   RunResult
	finished time.Time
}

func newRegistry(s ServerConfig) *registry {
	return &registry{
		slots:            make(chan struct{}, s.MaxConcurrentRuns),
		admissionTimeout: s.AdmissionTimeout,
		replyDeadline:    s.ReplyDeadline,
		retain:           s.RetainCompleted,
		runs:             map[string]*record{},
	}
}

// admit waits for a slot for at most admissionTimeout. The returned
// function gives the slot back.
func (r *registry) admit(ctx context.Context) (release func(), ok bool) {
	t := time.NewTimer(r.admissionTimeout)
	defer t.Stop()
	select {
	case r.slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-r.slots }) }, true
	case <-t.C:
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
}

// refusal is the retryable answer to a call that found no slot.
func (r *registry) refusal() string {
	return fmt.Sprintf("every run slot is busy and none came free within %s. Retry in a moment.", formatHuman(r.admissionTimeout))
}

// start registers a run and runs fn in the background; fn's result is
// recorded when it returns. The run's context is detached from the call,
// so that a run past the reply deadline goes on.
func (r *registry) start(prompt string, fn func(ctx context.Context, rec *record) RunResult) *record {
	ctx, cancel := context.WithCancel(context.Background())
	rec := &record{id: newRunID(), prompt: prompt, started: time.Now(), cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.evictLocked()
	r.runs[rec.id] = rec
	r.mu.Unlock()
	go func() {
		defer cancel()
		res := fn(ctx, rec)
		res.RunID, res.Prompt = rec.id, prompt
		r.mu.Lock()
		rec.result, rec.finished = res, time.Now()
		r.mu.Unlock()
		close(rec.done)
	}()
	return rec
}

// settle waits for rec until the reply deadline. A call whose context
// ends first (the client went away or cancelled) cancels the run.
func (r *registry) settle(ctx context.Context, rec *record) (RunResult, error) {
	t := time.NewTimer(r.replyDeadline)
	defer t.Stop()
	select {
	case <-rec.done:
		return r.snapshot(rec), nil
	case <-t.C:
		return r.snapshot(rec), nil
	case <-ctx.Done():
		rec.cancel()
		return RunResult{}, ctx.Err()
	}
}

// check reports a run by id; false when no such run is held.
func (r *registry) check(id string) (RunResult, bool) {
	r.mu.Lock()
	r.evictLocked()
	rec, ok := r.runs[id]
	r.mu.Unlock()
	if !ok {
		return RunResult{}, false
	}
	return r.snapshot(rec), true
}

func (r *registry) snapshot(rec *record) RunResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !rec.finished.IsZero() {
		return rec.result
	}
	return RunResult{RunID: rec.id, Prompt: rec.prompt, Status: StatusRunning, ElapsedMS: time.Since(rec.started).Milliseconds()}
}

// unknown is the answer for an id nobody holds.
func (r *registry) unknown(id string) string {
	return fmt.Sprintf("no run %s. A run is collectable while it is going and for %s after it finishes; anything older has been evicted.", id, formatHuman(r.retain))
}

// evictLocked drops runs finished more than retain ago.
func (r *registry) evictLocked() {
	now := time.Now()
	for id, rec := range r.runs {
		if !rec.finished.IsZero() && now.Sub(rec.finished) > r.retain {
			delete(r.runs, id)
		}
	}
}

// cancelAll cancels every run still going (at shutdown).
func (r *registry) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.runs {
		rec.cancel()
	}
}

// wait waits until every run has ended or ctx is done.
func (r *registry) wait(ctx context.Context) {
	r.mu.Lock()
	var pending []*record
	for _, rec := range r.runs {
		pending = append(pending, rec)
	}
	r.mu.Unlock()
	for _, rec := range pending {
		select {
		case <-rec.done:
		case <-ctx.Done():
			return
		}
	}
}

// formatHuman writes d as upstream's humantime does: "1h", "30s",
// "1h 30m", "500ms".
func formatHuman(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}, {time.Nanosecond, "ns"}} {
		if n := d / u.d; n > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", n, u.name))
			d -= n * u.d
		}
	}
	return strings.Join(parts, " ")
}

func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
