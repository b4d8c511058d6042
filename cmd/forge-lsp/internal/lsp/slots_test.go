package lsp

import (
	"context"
	"slices"
	"testing"
	"time"
)

// testSlots returns slots of n, all taken, and a channel that receives
// each time a job joins a queue or is promoted to the due queue.
func testSlots(t *testing.T, n int) (*slots, <-chan struct{}) {
	t.Helper()
	s := newSlots(n)
	moved := make(chan struct{}, 16)
	s.moved = func() { moved <- struct{}{} }
	for range n {
		if !s.acquire(context.Background(), time.Time{}) {
			t.Fatal("a free slot was refused")
		}
	}
	return s, moved
}

// awaitMoved waits for one event on ch (what names it in the failure).
func awaitMoved(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second): // failure bound only
		t.Fatalf("%s did not happen", what)
	}
}

// grantOrder starts one acquire per job (in order, each queued before the
// next starts) on a full slots and returns the order they are granted in
// as slots are released one at a time.
func grantOrder(t *testing.T, s *slots, moved <-chan struct{}, dues []time.Time) []int {
	t.Helper()
	granted := make(chan int, len(dues))
	for i, due := range dues {
		go func() {
			if s.acquire(context.Background(), due) {
				granted <- i
			}
		}()
		awaitMoved(t, moved, "a job's queueing")
	}
	var order []int
	for range dues {
		s.release()
		order = append(order, <-granted)
	}
	return order
}

// TestSlotsDueFirst: a freed slot goes to the jobs already due, in the
// order they came, before any job still inside its delay.
func TestSlotsDueFirst(t *testing.T) {
	s, moved := testSlots(t, 1)
	later := time.Now().Add(time.Hour)
	got := grantOrder(t, s, moved, []time.Time{later, {}, later, {}})
	if want := []int{1, 3, 0, 2}; !slices.Equal(got, want) {
		t.Fatalf("granted in order %v, want %v", got, want)
	}
}

// TestSlotsPromote: an early job whose delay passes while it waits is
// served before early jobs that came earlier but are not yet due.
func TestSlotsPromote(t *testing.T) {
	s, moved := testSlots(t, 1)
	got := make(chan int, 2)
	go func() {
		if s.acquire(context.Background(), time.Now().Add(time.Hour)) {
			got <- 0
		}
	}()
	awaitMoved(t, moved, "the first job's queueing")
	go func() {
		if s.acquire(context.Background(), time.Now().Add(20*time.Millisecond)) {
			got <- 1
		}
	}()
	awaitMoved(t, moved, "the second job's queueing")
	awaitMoved(t, moved, "the second job's promotion when its delay passed")
	s.release()
	if first := <-got; first != 1 {
		t.Fatalf("job %d got the slot first, want the promoted job 1", first)
	}
	s.release()
	<-got
}

// TestSlotsCancel: a job whose context ends leaves the queue and takes no
// slot; the slot goes to the next job.
func TestSlotsCancel(t *testing.T) {
	s, moved := testSlots(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan bool)
	go func() { res <- s.acquire(ctx, time.Time{}) }()
	awaitMoved(t, moved, "the job's queueing")
	cancel()
	if <-res {
		t.Fatal("a cancelled job got a slot")
	}
	s.mu.Lock()
	left := len(s.due) + len(s.early)
	s.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d jobs still queued after the only one was cancelled", left)
	}
	s.release()
	if !s.acquire(context.Background(), time.Now().Add(time.Hour)) {
		t.Fatal("the slot the cancelled job did not take was lost")
	}
}
