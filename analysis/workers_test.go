package analysis

import (
	"sync"
	"testing"
	"time"
)

// TestWorkersNeverQueue: a task never waits for another to finish, also
// with more tasks at once than workers may wait (each task here waits
// until every other has started, as an analyzer waits for its
// requirements), and a worker that finished takes the next task instead
// of a new goroutine starting.
func TestWorkersNeverQueue(t *testing.T) {
	const n = 2*maxIdleWorkers + 10
	var started, done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	all := make(chan struct{})
	for range n {
		goWork(func() {
			defer done.Done()
			started.Done()
			<-all
		})
	}
	go func() {
		started.Wait()
		close(all)
	}()
	finished := make(chan struct{})
	go func() {
		done.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("tasks waited for each other")
	}
	// The workers that finished wait for tasks, at most maxIdleWorkers
	// of them.
	deadline := time.Now().Add(10 * time.Second)
	for idleWorkers.Load() < maxIdleWorkers {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers waiting, want %d", idleWorkers.Load(), maxIdleWorkers)
		}
		time.Sleep(time.Millisecond)
	}
	if got := idleWorkers.Load(); got != maxIdleWorkers {
		t.Fatalf("%d workers waiting, want at most %d", got, maxIdleWorkers)
	}
	// A task goes to one of them (no test of the package runs beside
	// this one).
	during := make(chan int32)
	goWork(func() { during <- idleWorkers.Load() })
	if got := <-during; got != maxIdleWorkers-1 {
		t.Fatalf("%d workers waiting while a task runs, want %d: the task did not go to a waiting one", got, maxIdleWorkers-1)
	}
}
