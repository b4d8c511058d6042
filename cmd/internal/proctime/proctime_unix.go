//go:build unix

// Package proctime reads the process's CPU time, for benchmarks that
// report CPU ratios measured in the same run.
package proctime

import (
	"syscall"
	"time"
)

// CPU is the process's CPU time so far, user plus system.
func CPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
