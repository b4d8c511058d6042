package httpguard

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve runs h behind Server with l on a loopback port.
func serve(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, gln := Server(h, ln, l)
	go hs.Serve(gln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// bearer answers 401 without reading the body unless the token is right,
// as both servers do; with it, it reads the body and echoes its size.
var bearer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer t" {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestTimeout)
		return
	}
	fmt.Fprintf(w, "read %d\n", len(b))
})

// slowRequest opens a connection, sends headers announcing a body of n
// bytes and one byte of it, and returns the connection.
func slowRequest(t testing.TB, addr, auth string, n int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", auth, n)
	return c
}

// ended waits (at most bound) for the server to close c, and returns
// what it answered.
func ended(t testing.TB, c net.Conn, bound time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(bound))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server still held the connection after %v (answered %q)", bound, b)
	}
	return string(b)
}

// TestUnauthenticatedBodyNotRead: an answer to a request that is not
// authenticated closes the connection at once; the server never waits for
// the body the client trickles (Go would read up to 256 KiB of it).
func TestUnauthenticatedBodyNotRead(t *testing.T) {
	addr := serve(t, bearer, Limits{BodyTimeout: time.Minute})
	c := slowRequest(t, addr, "Bearer wrong", 100)
	defer c.Close()
	began := time.Now()
	got := ended(t, c, 10*time.Second)
	if !strings.Contains(got, "401") || !strings.Contains(got, "Connection: close") {
		t.Fatalf("answered %q", got)
	}
	t.Logf("closed after %v", time.Since(began))
}

// TestSlowBodyCut: an authenticated body that does not arrive within the
// body deadline ends the request.
func TestSlowBodyCut(t *testing.T) {
	addr := serve(t, bearer, Limits{BodyTimeout: 300 * time.Millisecond})
	c := slowRequest(t, addr, "Bearer t", 100)
	defer c.Close()
	began := time.Now()
	ended(t, c, 10*time.Second)
	if d := time.Since(began); d < 300*time.Millisecond {
		t.Fatalf("cut after %v, before the deadline", d)
	}
}

// TestLongAnswerNotCut: once the body is in, an answer may stream for
// longer than the body deadline, and the request stays alive.
func TestLongAnswerNotCut(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		for i := 0; i < 4; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(150 * time.Millisecond):
			}
			fmt.Fprintf(w, "tick %d\n", i)
			w.(http.Flusher).Flush()
		}
	})
	addr := serve(t, h, Limits{BodyTimeout: 200 * time.Millisecond})
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "tick 3") {
		t.Fatalf("the answer was cut: %q", b)
	}
}

// TestConnectionCap: a connection over the cap is answered 503 and
// closed; one freed is usable again.
func TestConnectionCap(t *testing.T) {
	addr := serve(t, bearer, Limits{MaxConns: 2})
	var held []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// A request answered on it proves the server took it.
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n")
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if got := ended(t, c, 10*time.Second); !strings.Contains(got, "503") || !strings.Contains(got, "connection limit") {
		t.Fatalf("over the cap: %q", got)
	}
	c.Close()
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/")
		if err == nil && resp.StatusCode == http.StatusUnauthorized {
			resp.Body.Close()
			break
		}
		if resp != nil {
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("a freed slot was not reused: %v %v", resp, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held[1].Close()
}
