//go:build !unix

package gatewayd

import "errors"

// rawSend is false where RawConn.Read's callback gets no file descriptor
// (Windows: a handle with overlapped I/O): a pooled connection writes the
// request and then reads the answer, with the connection's own Write
// and Read, and a caller's connection is read and written by its own
// (rawIO).
const rawSend = false

var errNoRaw = errors.New("gatewayd: no raw send on this system")

func rawWrite(uintptr, []byte) (int, error) { return 0, errNoRaw }

func rawRead(uintptr, []byte) (int, error) { return 0, errNoRaw }
