package gatewayd

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestSpinWait: a wait polls for at most its budget, only while the
// process has no other request than its own, never beside another
// polling wait, and gives up (a miss) when its core was taken.
func TestSpinWait(t *testing.T) {
	if !canSpin {
		t.Skip("waits poll only on Linux")
	}
	var active atomic.Int64
	held := func(name string, want bool) {
		t.Helper()
		if spinning.Load() != want {
			t.Fatalf("%s: polling token held %v, want %v", name, !want, want)
		}
	}

	// The budget runs out: a miss, the token given back. (Polls may
	// take long on a busy machine: no gap is too long here.)
	w := spinWait{budget: 300 * time.Microsecond, active: &active, gap: time.Hour}
	t0 := time.Now()
	polls := 0
	for w.again() {
		polls++
		if polls > 1e7 {
			t.Fatal("polled past its budget")
		}
	}
	if d := time.Since(t0); d < 300*time.Microsecond || !w.missed || polls == 0 {
		t.Fatalf("polled %d times for %v, missed %v: want the whole budget, then a miss", polls, d, w.missed)
	}
	held("after the budget", false)

	// Another request in flight: no poll at all.
	active.Store(1)
	w = spinWait{budget: time.Second, active: &active}
	if w.again() || w.missed {
		t.Fatal("polled while another request was in flight")
	}
	held("with another request", false)

	// Another request arrives while it polls: it parks, not a miss.
	active.Store(1)
	w = spinWait{budget: time.Second, active: &active, most: 1}
	if !w.again() {
		t.Fatal("did not poll while its request was the only one")
	}
	held("polling", true)
	active.Store(2)
	if w.again() || w.missed {
		t.Fatal("polled on after another request arrived")
	}
	held("after another request arrived", false)
	active.Store(0)

	// Another wait polls: this one parks.
	first := spinWait{budget: time.Second, active: &active}
	if !first.again() {
		t.Fatal("the first wait did not poll")
	}
	w = spinWait{budget: time.Second, active: &active}
	if w.again() {
		t.Fatal("two waits polled at once")
	}
	first.stop()
	held("after stop", false)

	// The core taken between two polls (here: a sleep): a miss.
	w = spinWait{budget: time.Second, active: &active}
	if !w.again() {
		t.Fatal("did not poll")
	}
	time.Sleep(5 * spinGap)
	if w.again() || !w.missed {
		t.Fatal("polled on after its core was taken")
	}
	held("after a gap", false)

	// After a miss, spinBackoff waits park at once.
	skip := 2
	if spinFor(time.Second, &skip) != 0 || spinFor(time.Second, &skip) != 0 || spinFor(time.Second, &skip) != time.Second || skip != 0 {
		t.Fatalf("spinFor after a miss: skip %d", skip)
	}
}

// TestLeanSpin: the lean path polling its sockets answers as it does
// without: sequential requests on a kept connection (the polls catch the
// next request and the answer), pipelined ones (already buffered), an
// endpoint slower than the budget (the poll runs out, the request parks
// and is answered), a caller that goes away; and no poll is left holding
// the process's token.
func TestLeanSpin(t *testing.T) {
	backend := scriptedBackend(t)
	g := open(t, fileFor(backend.URL, ""))
	addr, srv := leanServe(t, g, ServerLimits{Spin: time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	for i := range 20 {
		if _, err := io.WriteString(c, chatReq(sayBody("fast", fmt.Sprint(i)), bearer(serverKey))); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"model":"fast"`) {
			t.Fatalf("answer %d: %d %s", i, resp.StatusCode, b)
		}
	}
	got, _ := rawCall(t, addr, chatReq(sayBody("fast", "1"), bearer(serverKey))+chatReq(sayBody("deep", "2"), bearer(serverKey)), 2)
	if got[0].status != 200 || got[1].status != 200 || !strings.Contains(got[1].body, `"model":"deep"`) {
		t.Fatalf("pipelined: %+v", got)
	}
	if n := srv.served.Load(); n != 22 {
		t.Fatalf("lean path served %d, want 22", n)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(5 * time.Millisecond) // longer than the budget
		io.WriteString(w, okAnswer)
	}))
	t.Cleanup(slow.Close)
	addr, srv = leanServe(t, open(t, fileFor(slow.URL, "")), ServerLimits{Spin: time.Millisecond})
	for range 3 {
		if ans, _ := rawCall(t, addr, chatReq(sayBody("fast", "x"), bearer(serverKey)), 1); ans[0].status != 200 {
			t.Fatalf("slow endpoint: %d %s", ans[0].status, ans[0].body)
		}
	}
	if srv.served.Load() != 3 {
		t.Fatalf("lean path served %d of the slow endpoint's, want 3", srv.served.Load())
	}
	// A connection waiting for its caller's next request may be polling
	// now; within its budget it parks and gives the token back.
	for end := time.Now().Add(10 * time.Second); spinning.Load(); {
		if time.Now().After(end) {
			t.Fatal("a poll still holds the token")
		}
		runtime.Gosched()
	}
}
