package gatewayd

import (
	"syscall"
	"unsafe"
)

// rawSend is whether the lean path reads and writes plain TCP connections
// through their descriptors (callerIO, sendThenRead): on Unix, where
// RawConn's callbacks get one.
const rawSend = true

// rawWrite and rawRead are write(2) and read(2) on a non-blocking socket
// made without telling Go's scheduler (RawSyscall): such a call never
// blocks, and the scheduler's bookkeeping of an ordinary system call is
// what costs a lock-step connection most. When every thread of the
// process was idle, the runtime's monitor thread sleeps, and the first
// ordinary system call after the idle wakes it (a futex wake, on this
// kind of machine often an inter-processor interrupt), on the request's
// path and once per request at one connection
// (docs/gateway.md#performance).
func rawWrite(fd uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

func rawRead(fd uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}
