package analysis

import "sync/atomic"

// Analyzers run on long-lived worker goroutines. Each run of a prompt of
// concurrentFrom bytes or more starts a goroutine per analyzer; a fresh
// goroutine starts on a small stack and grows it, by copying, to the
// depth its analyzer's walks and evaluations reach, on every run: on a
// language server re-analysing a long prompt per keystroke, that copying
// was 3.5-5% of the CPU. A worker that finished an analyzer keeps its
// stack and waits for the next one.
//
// A task goes to a worker that is waiting, else to a new goroutine, so
// a task never waits for another to finish (an analyzer waits for its
// requirements on the worker that runs it, and a run waits for its
// analyzers). At most maxIdleWorkers wait; the others end.

// maxIdleWorkers bounds the waiting workers: a run of the checker's
// analyzers on two cores at a time, with room to spare. The runtime
// shrinks the stacks of waiting goroutines at each collection that finds
// them mostly unused, so waiting workers hold little memory.
const maxIdleWorkers = 128

var (
	// workerTasks hands a task to a waiting worker (unbuffered: a send
	// succeeds only when one waits).
	workerTasks = make(chan func())
	// idleWorkers counts the workers waiting on workerTasks, or about to.
	idleWorkers atomic.Int32
)

// goWork runs f on a waiting worker, or on a new one when none waits.
func goWork(f func()) {
	select {
	case workerTasks <- f:
	default:
		go worker(f)
	}
}

// worker runs f, then the tasks handed to it, while at most
// maxIdleWorkers others wait.
func worker(f func()) {
	for {
		f()
		if idleWorkers.Add(1) > maxIdleWorkers {
			idleWorkers.Add(-1)
			return
		}
		f = <-workerTasks
		idleWorkers.Add(-1)
	}
}
