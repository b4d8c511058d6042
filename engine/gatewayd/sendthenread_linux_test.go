package gatewayd

import (
	"bytes"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// rawFD is a syscall.RawConn over a descriptor that is always ready.
type rawFD uintptr

func (r rawFD) Control(f func(uintptr)) error { f(uintptr(r)); return nil }
func (r rawFD) Read(f func(uintptr) bool) error {
	for !f(uintptr(r)) {
	}
	return nil
}
func (r rawFD) Write(f func(uintptr) bool) error { return r.Read(f) }

// TestSendThenReadShortWrite: when the descriptor takes only part of the
// request, the rest goes through the connection's own Write, and the
// answer through its Read; nothing is lost or sent twice.
func TestSendThenReadShortWrite(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	fd := int(pw.Fd())
	// A pipe of one page, not blocking: a longer write is cut short.
	const setPipeSize = 1031 // F_SETPIPE_SZ
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), setPipeSize, 4096); e != 0 {
		t.Fatal(e)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	client.SetDeadline(time.Now().Add(10 * time.Second))
	server.SetDeadline(time.Now().Add(10 * time.Second))
	req := append(bytes.Repeat([]byte("0123456789"), 1200), "END"...)
	const answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
	rest := make(chan []byte, 1)
	go func() {
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.HasSuffix(got, []byte("END")) {
			n, err := server.Read(buf)
			if err != nil {
				break
			}
			got = append(got, buf[:n]...)
		}
		rest <- got
		io.WriteString(server, answer)
	}()
	pc := &pconn{c: client, raw: rawFD(fd), pending: req}
	p := make([]byte, 256)
	n, err := (*sendThenRead)(pc).Read(p)
	if err != nil || string(p[:n]) != answer {
		t.Fatalf("read %q, %v", p[:n], err)
	}
	first := make([]byte, 8192)
	k, _ := pr.Read(first)
	if k == 0 || k == len(req) {
		t.Fatalf("the descriptor took %d of %d bytes: the write was not cut short", k, len(req))
	}
	if sent := append(first[:k], <-rest...); !bytes.Equal(sent, req) {
		t.Fatalf("sent %d bytes, want the %d of the request in order", len(sent), len(req))
	}
	if len(pc.pending) != 0 {
		t.Fatalf("%d bytes still pending", len(pc.pending))
	}
}
