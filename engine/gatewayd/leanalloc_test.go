package gatewayd

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// rawEndpoint answers every request on its connections with answer, by
// hand: it reads a head and a Content-Length body and writes the answer,
// allocating nothing per request, so that a process's allocations while
// it serves are the gateway's.
func rawEndpoint(t testing.TB, answer string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	reply := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer))
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				have := 0
				for {
					end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
					if end < 0 {
						n, err := c.Read(buf[have:])
						if err != nil {
							return
						}
						have += n
						continue
					}
					i := bytes.Index(buf[:end], []byte("Content-Length: "))
					if i < 0 {
						return
					}
					j := i + len("Content-Length: ")
					k := j + bytes.IndexByte(buf[j:end+2], '\r')
					n, _ := parseLength(buf[j:k])
					need := end + 4 + int(n)
					for have < need {
						m, err := c.Read(buf[have:])
						if err != nil {
							return
						}
						have += m
					}
					if _, err := c.Write(reply); err != nil {
						return
					}
					have = copy(buf, buf[need:have])
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestLeanAllocations: a chat request on the lean path allocates at most
// two objects (one is the log line), nothing per byte of the request or
// the answer. The endpoint and the client here allocate nothing, so the
// process's allocations are the gateway's.
func TestLeanAllocations(t *testing.T) {
	g := open(t, fileFor(rawEndpoint(t, loadReply), ""))
	var lines atomic.Int64
	g.Log = func(string) { lines.Add(1) }
	addr, srv := leanServe(t, g, ServerLimits{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte(chatReq(fmt.Sprintf(loadRequest, "fast"), bearer(serverKey)))
	// The answer's length: every answer has the same (a Date is always
	// 29 bytes).
	one := func() []byte {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 0, 4096)
		for !bytes.Contains(b, []byte("\r\n\r\n")) {
			n, err := c.Read(b[len(b):cap(b)])
			if err != nil {
				t.Fatal(err)
			}
			b = b[:len(b)+n]
		}
		return b
	}
	head := one()
	end := bytes.Index(head, []byte("\r\n\r\n")) + 4
	i := bytes.Index(head, []byte("Content-Length: ")) + len("Content-Length: ")
	n, _ := strconv.Atoi(string(head[i : i+bytes.IndexByte(head[i:], '\r')]))
	if rest := end + n - len(head); rest > 0 {
		io.ReadFull(c, make([]byte, rest))
	}
	size := end + n
	buf := make([]byte, size)
	allocs := testing.AllocsPerRun(200, func() {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	})
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || srv.served.Load() < 200 || lines.Load() < 200 {
		t.Fatalf("not served by the lean path: %d served, %d lines, %q", srv.served.Load(), lines.Load(), buf)
	}
	t.Logf("%.1f allocations per request", allocs)
	if allocs > 2 && !raceEnabled {
		t.Fatalf("%.1f allocations per request, want at most 2", allocs)
	}
}
