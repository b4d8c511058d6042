//go:build unix && !linux

package gatewayd

import "syscall"

// rawSend is whether the lean path reads and writes plain TCP connections
// through their descriptors (rawIO, sendThenRead): on Unix, where
// RawConn's callbacks get one. Linux makes these calls without the
// scheduler's bookkeeping (leanraw_linux.go); here they are ordinary
// system calls.
const rawSend = true

func rawWrite(fd uintptr, p []byte) (int, error) { return syscall.Write(int(fd), p) }

func rawRead(fd uintptr, p []byte) (int, error) { return syscall.Read(int(fd), p) }
