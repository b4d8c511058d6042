package analysis

// SetConcurrentFrom sets the prompt size from which Run runs analyzers
// concurrently, for the driver's benchmarks, and returns a function that
// restores it.
func SetConcurrentFrom(n int) (restore func()) {
	old := concurrentFrom
	concurrentFrom = n
	return func() { concurrentFrom = old }
}
