//go:build unix

package gatewayd

import "syscall"

// rawSend is whether a pooled plain TCP connection sends a request as it
// waits for the answer (sendThenRead): on Unix, where RawConn.Read hands
// its callback a file descriptor.
const rawSend = true

func rawWrite(fd uintptr, p []byte) (int, error) { return syscall.Write(int(fd), p) }

func rawRead(fd uintptr, p []byte) (int, error) { return syscall.Read(int(fd), p) }
