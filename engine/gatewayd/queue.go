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
// unlimited.
type lane struct {
	max, maxDepth int
	fair          bool

	mu       sync.Mutex
	inflight int
	waiting  int
	fifo     []*waiter
	byClient map[string][]*waiter
	order    []string
}

type waiter struct {
	ready  chan struct{}
	client string
}

func newLane(concurrency int, q QueueConfig) *lane {
	if concurrency < 1 {
		return nil
	}
	return &lane{max: concurrency, maxDepth: q.depth(), fair: q.fair(), byClient: map[string][]*waiter{}}
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
	w := &waiter{ready: make(chan struct{}, 1), client: client}
	l.waiting++
	if l.fair {
		if _, ok := l.byClient[client]; !ok && len(l.order) >= MaxClients {
			w.client = defaultClient
		}
		q, ok := l.byClient[w.client]
		l.byClient[w.client] = append(q, w)
		if !ok {
			l.order = append(l.order, w.client)
		}
	} else {
		l.fifo = append(l.fifo, w)
	}
	l.mu.Unlock()
	select {
	case <-w.ready:
		return l.release, nil
	case <-ctx.Done():
		l.mu.Lock()
		removed := l.remove(w)
		l.mu.Unlock()
		if !removed {
			// The slot was handed over as the caller gave up: pass it on.
			<-w.ready
			l.release()
		}
		return nil, ctx.Err()
	}
}

// release hands the slot to the next waiter (round-robin over clients
// when fair) or frees it.
func (l *lane) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	var w *waiter
	if l.fair {
		if len(l.order) > 0 {
			c := l.order[0]
			l.order = l.order[1:]
			q := l.byClient[c]
			w = q[0]
			if len(q) == 1 {
				delete(l.byClient, c)
			} else {
				l.byClient[c] = q[1:]
				l.order = append(l.order, c)
			}
		}
	} else if len(l.fifo) > 0 {
		w, l.fifo = l.fifo[0], l.fifo[1:]
	}
	if w == nil {
		l.inflight--
		return
	}
	l.waiting--
	w.ready <- struct{}{}
}

// remove takes a waiter that gave up out of the queue; false when it was
// already handed a slot.
func (l *lane) remove(w *waiter) bool {
	if !l.fair {
		for i, x := range l.fifo {
			if x == w {
				l.fifo = append(l.fifo[:i], l.fifo[i+1:]...)
				l.waiting--
				return true
			}
		}
		return false
	}
	q := l.byClient[w.client]
	for i, x := range q {
		if x != w {
			continue
		}
		q = append(q[:i], q[i+1:]...)
		l.waiting--
		if len(q) == 0 {
			delete(l.byClient, w.client)
			for j, c := range l.order {
				if c == w.client {
					l.order = append(l.order[:j], l.order[j+1:]...)
					break
				}
			}
		} else {
			l.byClient[w.client] = q
		}
		return true
	}
	return false
}
