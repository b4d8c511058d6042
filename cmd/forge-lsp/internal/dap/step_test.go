package dap

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

func TestStepInOutExecuteJump(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution, StopOnEntry: true}, []int{15, 27}, nil)
	// stopOnEntry: the H1's entry.
	_, f := c.at("entry", 7)
	if f.Name != "# T" {
		t.Errorf("entry frame %q", f.Name)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	c.at("breakpoint", 15)
	// step in: into the block, statement by statement.
	c.step("stepIn", mainThread, 16)
	c.step("next", mainThread, 17)
	c.step("next", mainThread, 18)
	// step in: into the execute target, a frame deeper.
	c.step("stepIn", mainThread, 50)
	fs := c.frames(mainThread)
	if len(fs) != 2 || fs[0].Name != "## Helper" || fs[1].Name != "## Main (lua)" || fs[1].Line != 18 {
		t.Fatalf("frames in the execute: %+v", fs)
	}
	if v := c.scope(fs[0].Id, "Run"); v["args"].Value != `"x"` {
		t.Errorf("the chain's args: %+v", v)
	}
	if got := c.eval(fs[1].Id, "args"); got != `"Ann"` {
		t.Errorf("the caller's frame: %s", got)
	}
	c.step("next", mainThread, 52)
	// step out: back in ## Main, right after the execute.
	c.step("stepOut", mainThread, 19)
	c.step("next", mainThread, 20)
	c.step("next", mainThread, 23)
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	c.at("breakpoint", 27)
	// next over the fanout and the jump: ## Skipped is skipped.
	c.step("next", mainThread, 28)
	c.step("next", mainThread, 29)
	_, f = c.step("next", mainThread, 44)
	if f.Name != "## Last" {
		t.Errorf("after the jump: %q", f.Name)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}

func TestFanoutArmsAreThreads(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{27}, nil)
	c.at("breakpoint", 27)
	c.step("stepIn", mainThread, 28)
	c.call("stepIn", godap.StepInArguments{ThreadId: mainThread})
	ev := c.stopped()
	if ev.Body.Reason != "step" || ev.Body.ThreadId == mainThread {
		t.Fatalf("step in a fanout: %+v", ev.Body)
	}
	ths := c.call("threads", nil).(*godap.ThreadsResponse).Body.Threads
	names := map[int]string{}
	for _, th := range ths {
		names[th.Id] = th.Name
	}
	name := names[ev.Body.ThreadId]
	if !strings.HasPrefix(name, "arm ") || (name != "arm 1: a" && name != "arm 2: b") || names[mainThread] != "main" {
		t.Fatalf("threads: %+v", ths)
	}
	fs := c.frames(ev.Body.ThreadId)
	if fs[0].Line != 32 || !strings.HasPrefix(fs[0].Name, "### Arm [arm ") {
		t.Errorf("arm frames: %+v", fs)
	}
	item := c.eval(fs[0].Id, "item")
	if item != `"`+name[len(name)-1:]+`"` {
		t.Errorf("item %s in thread %q", item, name)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}

func TestConditionalBreakpoint(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{34}, map[int]string{34: `item == "b"`})
	ev := c.stopped()
	fs := c.frames(ev.Body.ThreadId)
	if ev.Body.Reason != "breakpoint" || fs[0].Line != 34 || c.eval(fs[0].Id, "item") != `"b"` {
		t.Fatalf("conditional stop: %+v %+v", ev.Body, fs)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	// Arm "a" never stopped: the next thing is the end.
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
}

func TestRestartReproducesTheRun(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution}, []int{23}, nil)
	_, f := c.at("breakpoint", 23)
	first := c.scope(f.Id, "Request")["1 user"].Value
	c.call("restart", nil)
	_, f = c.at("breakpoint", 23)
	if again := c.scope(f.Id, "Request")["1 user"].Value; again != first {
		t.Errorf("restart: %s, first run %s", again, first)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "last done\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
	// The restarted run ended once: one terminated event in all.
	for _, m := range c.events {
		if e, ok := m.(godap.EventMessage); ok && e.GetEvent().Event == "terminated" {
			t.Errorf("a second terminated event")
		}
	}
}

func TestTerminateMidModelRound(t *testing.T) {
	prog, _ := fixture(t)
	before := runtime.NumGoroutine()
	received := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case received <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	c := start(t, Options{Env: gatewayEnv(hang.URL + "/v1")})
	c.launch(LaunchArgs{Program: prog, Input: "Ann"}, nil, nil)
	select {
	case <-received:
	case <-time.After(30 * time.Second):
		t.Fatal("the model round never started")
	}
	c.call("terminate", nil)
	c.event("terminated")
	if ex := c.event("exited").(*godap.ExitedEvent); ex.Body.ExitCode != 130 {
		t.Errorf("exit code %d, want 130 (interrupted)", ex.Body.ExitCode)
	}
	c.call("disconnect", nil)
	if err := <-c.done; err != nil {
		t.Fatal(err)
	}
	c.done <- nil // for the cleanup
	hang.Close()
	// Every goroutine of the session is gone (the HTTP client's idle
	// connections close with the server).
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines left behind (%d before):\n%s", n-before, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestPauseRequest(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Input: "Ann", Replay: cas, Execution: execution, StopOnEntry: true}, nil, nil)
	c.at("entry", 7)
	c.call("pause", godap.PauseArguments{ThreadId: mainThread})
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	// The pause holds the run at the very next point.
	c.at("pause", 9)
	if msg := c.callErr("evaluate", godap.EvaluateArguments{Expression: "1 +", FrameId: frameID(mainThread, 0, 0)}); msg == "" {
		t.Error("a syntax error needs a message")
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, _ := c.finish(); out != "last done\n" {
		t.Errorf("end: %q", out)
	}
}
