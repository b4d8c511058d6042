package dap

import (
	"fmt"
	"strings"
	"testing"

	godap "github.com/google/go-dap"
)

// raw writes bytes as they are.
func (c *client) raw(s string) {
	c.t.Helper()
	if _, err := c.conn.Write([]byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

func frameOf(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// errorFor reads until an error response and returns it.
func (c *client) errorResponse() godap.Response {
	c.t.Helper()
	for {
		m := c.read()
		if r, ok := m.(godap.ResponseMessage); ok {
			resp := r.GetResponse()
			if resp.Success {
				c.t.Fatalf("a malformed message was answered with success: %+v", resp)
			}
			return *resp
		}
		c.events = append(c.events, m)
	}
}

// Every malformed message is answered with an error response, and the
// session goes on: the next well-formed request is answered.
func TestMalformedRequestsKeepTheSession(t *testing.T) {
	cases := []struct {
		name, data   string
		seq          int
		command, msg string
	}{
		{"invalid JSON", frameOf(`{"seq":1,"type":"request",`), 0, "", "not a JSON object"},
		{"not an object", frameOf(`[1,2]`), 0, "", "not a JSON object"},
		{"null", frameOf(`null`), 0, "", "not a request"},
		{"event from the client", frameOf(`{"seq":2,"type":"event","event":"x"}`), 2, "", "not a request"},
		{"no command", frameOf(`{"seq":3,"type":"request"}`), 3, "", `without a "command"`},
		{"unknown command", frameOf(`{"seq":4,"type":"request","command":"frobnicate"}`), 4, "frobnicate", "unsupported request frobnicate"},
		{"wrong argument type", frameOf(`{"seq":5,"type":"request","command":"stackTrace","arguments":{"threadId":"one"}}`), 5, "stackTrace", "threadId must be a number"},
		{"arguments not an object", frameOf(`{"seq":6,"type":"request","command":"evaluate","arguments":7}`), 6, "evaluate", "bad evaluate request"},
		{"wrong seq type", frameOf(`{"seq":"7","type":"request","command":"threads"}`), 0, "threads", "bad threads request"},
		{"misspelt header", "Content-Lenght: 2\r\n\r\n", 0, "", "without Content-Length"},
		{"negative length", "Content-Length: -4\r\n\r\n", 0, "", "bad Content-Length"},
		{"huge length", "Content-Length: 99999999999\r\n\r\n", 0, "", "over the limit"},
		{"no header at all", `{"seq":8,"type":"request","command":"threads"}` + "\r\n\r\n", 0, "", "bad message header"},
		{"garbage before a header", `xx{}Content-Length: 2` + "\r\n\r\n{}", 0, "", "bad message header"},
	}
	c := start(t, Options{})
	for _, tc := range cases {
		c.raw(tc.data)
		r := c.errorResponse()
		if r.RequestSeq != tc.seq || r.Command != tc.command || !strings.Contains(r.Message, tc.msg) {
			t.Errorf("%s: answered seq %d command %q %q; want seq %d command %q ~%q", tc.name, r.RequestSeq, r.Command, r.Message, tc.seq, tc.command, tc.msg)
		}
		if tc.name == "garbage before a header" {
			// The {} after the garbage is a message of its own.
			if r := c.errorResponse(); !strings.Contains(r.Message, "not a request") {
				t.Errorf("after the garbage: %q", r.Message)
			}
		}
		// The session is alive.
		c.call("threads", nil)
	}
	c.call("initialize", map[string]any{"adapterID": "promptforge"})
}
