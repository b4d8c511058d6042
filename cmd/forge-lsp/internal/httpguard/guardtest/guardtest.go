// Package guardtest is the load test of the servers httpguard protects:
// many slow, unauthenticated clients at once.
package guardtest

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Result is what a SlowClients run saw.
type Result struct {
	// Slowest is how long the last connection took to end.
	Slowest time.Duration
	// Statuses counts the answers by status line ("401", "503", ...).
	Statuses map[string]int
}

// SlowClients opens n connections to addr at once; each sends the
// headers of an unauthenticated POST to path announcing a 1,000-byte body,
// then one byte of that body every 100ms, as a client that holds a
// connection open at no cost to itself. It fails tb unless the server
// ends every connection within bound.
func SlowClients(tb testing.TB, addr, path string, n int, bound time.Duration) Result {
	tb.Helper()
	res := Result{Statuses: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	began := time.Now()
	dials := make(chan struct{}, 64)
	var failures []string
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dials <- struct{}{}
			c, err := net.Dial("tcp", addr)
			<-dials
			if err != nil {
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
				return
			}
			defer c.Close()
			closed := make(chan struct{})
			go func() {
				fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", path)
				for {
					select {
					case <-closed:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			_ = c.SetReadDeadline(time.Now().Add(bound))
			b, err := io.ReadAll(c)
			close(closed)
			d := time.Since(began)
			mu.Lock()
			defer mu.Unlock()
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				failures = append(failures, fmt.Sprintf("held past %v (answered %q)", bound, b))
				return
			}
			status := "none"
			if f := strings.Fields(string(b)); len(f) > 1 {
				status = f[1]
			}
			res.Statuses[status]++
			res.Slowest = max(res.Slowest, d)
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		tb.Fatalf("%d of %d connections failed; first: %s", len(failures), n, failures[0])
	}
	return res
}

// RSS is this process's resident memory in bytes after a collection that
// returns freed memory to the system; 0 where /proc is missing.
func RSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
