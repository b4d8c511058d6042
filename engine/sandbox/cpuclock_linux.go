package sandbox

import (
	"syscall"
	"time"
	"unsafe"
)

// cpuClockSupported reports whether threadCPU works on this platform.
const cpuClockSupported = true

// currentThread returns the OS thread the calling goroutine runs on.
func currentThread() int { return syscall.Gettid() }

// threadCPU returns the CPU time thread tid has used, from its
// per-thread CPU clock (the kernel's MAKE_THREAD_CPUCLOCK(tid,
// CPUCLOCK_SCHED)), or false when the thread is gone.
func threadCPU(tid int) (time.Duration, bool) {
	clock := int32(^uint32(tid))<<3 | 6
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
