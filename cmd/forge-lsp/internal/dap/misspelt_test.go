package dap

import (
	"strconv"
	"strings"
	"testing"
)

// TestMisspeltHeaderWithBody: a message whose Content-Length header is
// misspelt, body included, is answered with an error that says so, and
// the session goes on with the next message (its body is not taken for a
// header of its own).
func TestMisspeltHeaderWithBody(t *testing.T) {
	c := start(t, Options{})
	for _, name := range []string{"Content-Lenght", "content-length ", "Content_Length", "Content-Length-X"} {
		body := `{"seq":9,"type":"request","command":"threads"}`
		c.raw(name + ": " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		r := c.errorResponse()
		if !strings.Contains(r.Message, "Content-Length") {
			t.Errorf("%s: answered %q", name, r.Message)
		}
		c.call("threads", nil)
	}
}
