package lsp

import (
	"context"
	"slices"
	"testing"
	"time"
)

// grantOrder starts one acquire per job (in order, each queued before the
// next starts) on a full slots and returns the order they are granted in
// as slots are released one at a time.
func grantOrder(t *testing.T, s *slots, dues []time.Time) []int {
	t.Helper()
	granted := make(chan int, len(dues))
	for i, due := range dues {
		go func() {
			if s.acquire(context.Background(), due) {
				granted <- i
			}
		}()
		waitQueued(t, s, i+1)
	}
	var order []int
	for range dues {
		s.release()
		order = append(order, <-granted)
	}
	return order
}

// waitQueued waits until n jobs wait on s (the goroutine has queued).
func waitQueued(t *testing.T, s *slots, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // failure bound only
	for {
		s.mu.Lock()
		q := len(s.due) + len(s.early)
		s.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs queued, want %d", q, n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestSlotsDueFirst: a freed slot goes to the jobs already due, in the
// order they came, before any job still inside its delay.
func TestSlotsDueFirst(t *testing.T) {
	s := newSlots(1)
	if !s.acquire(context.Background(), time.Time{}) {
		t.Fatal("a free slot was refused")
	}
	later := time.Now().Add(time.Hour)
	got := grantOrder(t, s, []time.Time{later, {}, later, {}})
	if want := []int{1, 3, 0, 2}; !slices.Equal(got, want) {
		t.Fatalf("granted in order %v, want %v", got, want)
	}
}

// TestSlotsPromote: an early job whose delay passes while it waits is
// served before early jobs that came earlier but are not yet due.
func TestSlotsPromote(t *testing.T) {
	s := newSlots(1)
	s.acquire(context.Background(), time.Time{})
	soon := time.Now().Add(20 * time.Millisecond)
	got := make(chan int, 2)
	go func() {
		if s.acquire(context.Background(), time.Now().Add(time.Hour)) {
			got <- 0
		}
	}()
	waitQueued(t, s, 1)
	go func() {
		if s.acquire(context.Background(), soon) {
			got <- 1
		}
	}()
	// Wait until the second job has been promoted to the due queue.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		promoted := len(s.due) == 1
		s.mu.Unlock()
		if promoted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job was not promoted when its delay passed")
		}
		time.Sleep(100 * time.Microsecond)
	}
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
	s := newSlots(1)
	s.acquire(context.Background(), time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan bool)
	go func() { res <- s.acquire(ctx, time.Time{}) }()
	waitQueued(t, s, 1)
	cancel()
	if <-res {
		t.Fatal("a cancelled job got a slot")
	}
	waitQueued(t, s, 0)
	s.release()
	if !s.acquire(context.Background(), time.Now().Add(time.Hour)) {
		t.Fatal("the slot the cancelled job did not take was lost")
	}
}
