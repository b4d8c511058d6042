//go:build !linux

package sandbox

import "time"

// cpuClockSupported reports whether threadCPU works on this platform:
// elsewhere the CPU budget is not enforced (the instruction budgets and
// the deadline still are).
const cpuClockSupported = false

func currentThread() int { return 0 }

func threadCPU(int) (time.Duration, bool) { return 0, false }
