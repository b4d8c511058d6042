package dap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// FuzzSession sends random and mutated messages into a live session, a
// run held at a breakpoint, and checks that the session answers a
// request after them and ends when asked. The input is split at NUL
// bytes: a part starting with 'H' is written as header lines with every
// digit replaced (so no length in it is valid and the stream stays in
// step), any other part as the body of one well-framed message. launch,
// restart and attach (they name files to run, record and trace) and
// disconnect (it ends the session) are left out.
func FuzzSession(f *testing.F) {
	for _, s := range []string{
		`{"seq":1,"type":"request","command":"threads"}`,
		`{"seq":2,"type":"request","command":"stackTrace","arguments":{"threadId":1}}`,
		`{"seq":3,"type":"request","command":"scopes","arguments":{"frameId":100001}}`,
		`{"seq":4,"type":"request","command":"variables","arguments":{"variablesReference":1}}`,
		`{"seq":5,"type":"request","command":"evaluate","arguments":{"expression":"n * 2","frameId":100101,"context":"repl"}}`,
		`{"seq":6,"type":"request","command":"evaluate","arguments":{"expression":"execute('## A')","frameId":0}}`,
		`{"seq":7,"type":"request","command":"next","arguments":{"threadId":1}}`,
		`{"seq":8,"type":"request","command":"stepIn","arguments":{"threadId":1}}` + "\x00" + `{"seq":9,"type":"request","command":"stepOut","arguments":{"threadId":1}}`,
		`{"seq":10,"type":"request","command":"continue","arguments":{"threadId":1}}` + "\x00" + `{"seq":11,"type":"request","command":"pause","arguments":{"threadId":1}}`,
		`{"seq":12,"type":"request","command":"setBreakpoints","arguments":{"source":{"path":"f.md"},"breakpoints":[{"line":-5},{"line":18,"condition":"i =="}]}}`,
		`{"seq":13,"type":"request","command":"setFunctionBreakpoints","arguments":{"breakpoints":[{"name":"x"}]}}`,
		`{"seq":14,"type":"request","command":"terminate"}`,
		`{"seq":15,"type":"request","command":"stackTrace","arguments":{"threadId":"1"}}`,
		`{"seq":16,"type":"request","command":"evaluate","arguments":7}`,
		`{"seq":17,"type":"request",`,
		`{"seq":1000000}`,
		"Hcontent-length: 12\r\nx: y",
		"HContent-Type: json",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	prog := filepath.Join(dir, "f.md")
	if err := os.WriteFile(prog, []byte(luaProgram), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parts := bytes.Split(data, []byte{0})
		for _, p := range parts {
			if len(p) > 0 && p[0] != 'H' && excluded(p) {
				t.Skip("launch, restart, attach and disconnect are not fuzzed")
			}
		}
		fuzzSession(t, prog, parts)
	})
}

// excluded reports whether body is a request the fuzz target leaves out,
// read as the adapter's reader reads it.
func excluded(body []byte) bool {
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil {
		return false
	}
	var cmd string
	_ = json.Unmarshal(env["command"], &cmd)
	switch cmd {
	case "launch", "restart", "attach", "disconnect":
		return true
	}
	return false
}

func fuzzSession(t *testing.T, prog string, parts [][]byte) {
	cs, ss := net.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(ss, ss, Options{Env: func(string) (string, bool) { return "", false }, Grace: 2 * time.Second})
		ss.Close()
		done <- err
	}()
	defer cs.Close()
	// Everything the server writes is read, so that it never blocks on
	// the pipe; responses to our own requests (seq >= 1e6) are passed on.
	ours := make(chan *godap.Response, 16)
	go func() {
		r := bufio.NewReader(cs)
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err != nil {
				close(ours)
				return
			}
			if rm, ok := m.(godap.ResponseMessage); ok && rm.GetResponse().RequestSeq >= 1e6 {
				ours <- rm.GetResponse()
			}
		}
	}()
	seq := int(1e6)
	write := func(b []byte) {
		_ = cs.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := cs.Write(b); err != nil {
			t.Fatalf("the session stopped reading: %v", err)
		}
	}
	request := func(command string, args any) *godap.Response {
		seq++
		m := map[string]any{"seq": seq, "type": "request", "command": command}
		if args != nil {
			m["arguments"] = args
		}
		b, _ := json.Marshal(m)
		write([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(b), b)))
		deadline := time.After(10 * time.Second)
		for {
			select {
			case r, ok := <-ours:
				if !ok {
					t.Fatalf("the session ended before answering %s", command)
				}
				// The input may carry a seq in our range: its answer is
				// not ours.
				if r.RequestSeq == seq {
					return r
				}
			case <-deadline:
				t.Fatalf("no answer to %s", command)
			}
		}
	}
	request("initialize", map[string]any{"adapterID": "promptforge"})
	request("launch", LaunchArgs{Program: prog, StopOnEntry: true})
	request("setBreakpoints", godap.SetBreakpointsArguments{Source: godap.Source{Path: prog}, Breakpoints: []godap.SourceBreakpoint{{Line: 13}}})
	request("configurationDone", nil)
	for _, p := range parts {
		if len(p) > 0 && p[0] == 'H' {
			h := bytes.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return 'x'
				}
				return r
			}, p[1:])
			write(append(h, "\r\n\r\n"...))
			continue
		}
		write([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(p))))
		write(p)
	}
	if r := request("threads", nil); !r.Success {
		t.Fatalf("threads after the input: %+v", r)
	}
	request("disconnect", nil)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after disconnect")
	}
}
