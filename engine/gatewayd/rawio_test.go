package gatewayd

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestRawIO: a caller's connection read and written through its
// descriptor behaves as the connection's own Read and Write: the bytes
// in order (a write larger than the socket's buffers waits for room),
// io.EOF at the end, the read deadline, a *net.OpError after a reset.
func TestRawIO(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var r rawIO
	r.bind()
	r.reset(c)
	if rawSend && r.raw == nil {
		t.Fatal("a TCP connection is not read through its descriptor")
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	peer.SetDeadline(time.Now().Add(10 * time.Second))

	// Small socket buffers: the write must wait for room many times.
	c.(*net.TCPConn).SetWriteBuffer(16 << 10)
	peer.(*net.TCPConn).SetReadBuffer(16 << 10)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
		peer.Write([]byte("answer"))
	}()
	if n, err := r.Write(big); n != len(big) || err != nil {
		t.Fatalf("wrote %d of %d: %v", n, len(big), err)
	}
	if !bytes.Equal(<-got, big) {
		t.Fatal("the peer read other bytes than were written")
	}
	p := make([]byte, 64)
	if n, err := io.ReadAtLeast(&r, p, len("answer")); err != nil || string(p[:n]) != "answer" {
		t.Fatalf("read %q, %v", p[:n], err)
	}

	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := r.Read(p); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))

	peer.Write([]byte("last"))
	peer.(*net.TCPConn).CloseWrite()
	var all []byte
	for {
		n, err := r.Read(p)
		all = append(all, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read %q, then %v, want io.EOF", all, err)
		}
	}
	if string(all) != "last" {
		t.Fatalf("read %q before the end", all)
	}

	// A reset: the peer closes at once (on loopback its reset arrives
	// within its close), so the next write fails.
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	var werr error
	for i := 0; i < 3 && werr == nil; i++ {
		_, werr = r.Write([]byte("more"))
	}
	var op *net.OpError
	if !errors.As(werr, &op) || op.Op != "write" {
		t.Fatalf("write after a reset: %v, want a *net.OpError of write", werr)
	}
}
