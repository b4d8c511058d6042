//go:build !unix

// Package proctime reads the process's CPU time, for benchmarks that
// report CPU ratios measured in the same run.
package proctime

import "time"

// CPU is zero where the process's CPU time is not read.
func CPU() time.Duration { return 0 }
