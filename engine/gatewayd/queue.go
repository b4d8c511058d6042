package gatewayd

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// ClientHeader names the caller for fair scheduling
// (docs/gateway.md#concurrency-and-queuing).
const ClientHeader = "X-PromptForge-Client"

// defaultClient is the bucket of callers without a valid label.
const defaultClient = "default"

// clientLabel is the header's value when it is 1..64 characters of
// [A-Za-z0-9-_.:], "default" otherwise.
func clientLabel(h string) string {
	h = strings.TrimSpace(h)
	if h == "" || len(h) > 64 {
		return defaultClient
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return defaultClient
		}
	}
	return h
}

// errQueueFull is a full wait queue (503 queue_full).
var errQueueFull = errors.New("queue full")

// lane limits an endpoint's requests in flight; further requests wait, at
// most maxDepth of them, taking turns by client when fair. A nil lane is
// unlimited. Every operation is O(1): waiters sit in intrusive lists, one
// per client, and the clients with waiters form a ring served in turn.
type lane struct {
	max, maxDepth int
	fair          bool

	mu       sync.Mutex
	inflight int
	waiting  int
	fifo     waiters                // when not fair
	byClient map[string]*clientTurn // clients with waiters, when fair
	ring     clientRing             // the same clients, in turn order
}

type waiter struct {
	ready      chan struct{}
	turn       *clientTurn // nil when not fair
	prev, next *waiter
	queued     bool
}

// waiters is a doubly linked FIFO of waiters.
type waiters struct{ head, tail *waiter }

func (q *waiters) push(w *waiter) {
	w.prev, w.next, w.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
}

func (q *waiters) unlink(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
}

// clientTurn is one client's waiters and its place in the ring.
type clientTurn struct {
	name       string
	q          waiters
	prev, next *clientTurn
}

// clientRing is the clients with waiters; the head's turn is next.
type clientRing struct {
	head, tail *clientTurn
	n          int
}

func (r *clientRing) push(c *clientTurn) {
	c.prev, c.next = r.tail, nil
	if r.tail != nil {
		r.tail.next = c
	} else {
		r.head = c
	}
	r.tail = c
	r.n++
}

func (r *clientRing) unlink(c *clientTurn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		r.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		r.tail = c.prev
	}
	c.prev, c.next = nil, nil
	r.n--
}

func newLane(concurrency int, q QueueConfig) *lane {
	if concurrency < 1 {
		return nil
	}
	return &lane{max: concurrency, maxDepth: q.depth(), fair: q.fair(), byClient: map[string]*clientTurn{}}
}

// admit waits for a slot. The returned release must be called once the
// request is done.
func (l *lane) admit(ctx context.Context, client string) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	if l.inflight < l.max {
		l.inflight++
		l.mu.Unlock()
		return l.release, nil
	}
	if l.waiting >= l.maxDepth {
		l.mu.Unlock()
		return nil, errQueueFull
	}
	w := &waiter{ready: make(chan struct{}, 1)}
	l.waiting++
	if l.fair {
		t := l.byClient[client]
		if t == nil && l.ring.n >= MaxClients {
			client = defaultClient
			t = l.byClient[client]
		}
		if t == nil {
			t = &clientTurn{name: client}
			l.byClient[client] = t
			l.ring.push(t)
		}
		w.turn = t
		t.q.push(w)
	} else {
		l.fifo.push(w)
	}
	l.mu.Unlock()
	select {
	case <-w.ready:
		return l.release, nil
	case <-ctx.Done():
		l.mu.Lock()
		removed := w.queued
		if removed {
			l.dequeue(w)
		}
		l.mu.Unlock()
		if !removed {
			// The slot was handed over as the caller gave up: pass it on.
			<-w.ready
			l.release()
		}
		return nil, ctx.Err()
	}
}

// tryAdmit takes a slot when one is free, without waiting: a free slot
// means nobody waits, so taking it keeps the turns fair. A nil lane is
// unlimited.
func (l *lane) tryAdmit() bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	ok := l.inflight < l.max
	if ok {
		l.inflight++
	}
	l.mu.Unlock()
	return ok
}

// dequeue takes a queued waiter out of its list (and its client out of
// the ring when it was the client's last).
func (l *lane) dequeue(w *waiter) {
	l.waiting--
	if t := w.turn; t != nil {
		t.q.unlink(w)
		if t.q.head == nil {
			l.ring.unlink(t)
			delete(l.byClient, t.name)
		}
		return
	}
	l.fifo.unlink(w)
}

// release hands the slot to the next waiter (round-robin over clients
// when fair) or frees it.
func (l *lane) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	var w *waiter
	if l.fair {
		if t := l.ring.head; t != nil {
			w = t.q.head
			l.dequeue(w)
			if t.q.head != nil { // the client waits again, after the others
				l.ring.unlink(t)
				l.ring.push(t)
			}
		}
	} else if l.fifo.head != nil {
		w = l.fifo.head
		l.dequeue(w)
	}
	if w == nil {
		l.inflight--
		return
	}
	w.ready <- struct{}{}
}
