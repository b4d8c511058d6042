package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// TestDapOverStdio drives `forge-lsp dap` as an editor does: DAP over the
// process's stdin and stdout, a breakpoint, a scope, the result and exit.
func TestDapOverStdio(t *testing.T) {
	prog := write(t, t.TempDir(), "p.md", goodPrompt)
	cmd := exec.Command(binary, "dap")
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(out)
	seq := 0
	send := func(command string, args any) {
		seq++
		b, _ := json.Marshal(map[string]any{"seq": seq, "type": "request", "command": command, "arguments": args})
		if err := godap.WriteBaseMessage(in, b); err != nil {
			t.Fatal(err)
		}
	}
	// next reads messages until one satisfies ok.
	next := func(ok func(godap.Message) bool) godap.Message {
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err != nil {
				t.Fatal(err)
			}
			if ok(m) {
				return m
			}
		}
	}
	isEvent := func(name string) func(godap.Message) bool {
		return func(m godap.Message) bool {
			e, ok := m.(godap.EventMessage)
			return ok && e.GetEvent().Event == name
		}
	}
	send("initialize", map[string]any{"adapterID": "promptforge"})
	next(isEvent("initialized"))
	send("launch", map[string]any{"program": prog})
	send("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "breakpoints": []any{map[string]any{"line": 10}}})
	send("configurationDone", nil)
	st := next(isEvent("stopped")).(*godap.StoppedEvent)
	if st.Body.Reason != "breakpoint" {
		t.Fatalf("stopped: %+v", st.Body)
	}
	send("stackTrace", map[string]any{"threadId": st.Body.ThreadId})
	tr := next(func(m godap.Message) bool { _, ok := m.(*godap.StackTraceResponse); return ok }).(*godap.StackTraceResponse)
	if len(tr.Body.StackFrames) == 0 || tr.Body.StackFrames[0].Line != 10 || tr.Body.StackFrames[0].Name != "## S (lua)" {
		t.Fatalf("stack: %+v", tr.Body)
	}
	send("continue", map[string]any{"threadId": st.Body.ThreadId})
	o := next(func(m godap.Message) bool { o, ok := m.(*godap.OutputEvent); return ok && o.Body.Category == "stdout" }).(*godap.OutputEvent)
	if o.Body.Output != "ok\n" {
		t.Errorf("result %q", o.Body.Output)
	}
	if ex := next(isEvent("exited")).(*godap.ExitedEvent); ex.Body.ExitCode != 0 {
		t.Errorf("exit code %d", ex.Body.ExitCode)
	}
	send("disconnect", nil)
	next(func(m godap.Message) bool { _, ok := m.(*godap.DisconnectResponse); return ok })
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("forge-lsp dap: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("forge-lsp dap did not exit after disconnect")
	}
}
