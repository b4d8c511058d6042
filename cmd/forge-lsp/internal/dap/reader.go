package dap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"
)

// Limits of the message reader: a message body, and a header line.
const (
	maxBody       = 16 << 20
	maxHeaderLine = 4 << 10
)

// badFrame is a message the reader could not take: a bad header, an
// over-long body, a body that is not a request. The session answers it
// with an error response and goes on with the next message.
type badFrame struct {
	seq     int
	command string
	msg     string
}

func (e *badFrame) Error() string { return e.msg }

// reader reads DAP messages (a Content-Length header, a blank line, a
// JSON body) and never gives up on the stream for a malformed one: a
// header it cannot read is skipped up to the next "Content-Length:", a
// body that does not decode is reported with the seq and command it
// carries, when it has them.
type reader struct {
	r *bufio.Reader
	// pending is the start of the next header, found inside a bad line.
	pending string
}

// next returns the next request, a *badFrame, or the stream's error
// (io.EOF and the like) that ends the session.
func (rd *reader) next() (godap.Message, error) {
	body, err := rd.frame()
	if err != nil {
		return nil, err
	}
	return decode(body)
}

// frame reads one message body.
func (rd *reader) frame() ([]byte, error) {
	length, bad, seen := -1, "", false
	for {
		line, err := rd.line()
		if err != nil {
			return nil, err
		}
		if line == "" {
			if !seen {
				continue // blank lines between messages
			}
			break
		}
		seen = true
		name, value, ok := strings.Cut(line, ":")
		if !ok || !validHeaderName(name) {
			// Garbage, possibly with the next message's header after
			// it (a body longer than its Content-Length said).
			if i := strings.Index(line, "Content-Length:"); i > 0 {
				rd.pending = line[i:]
			}
			bad = fmt.Sprintf("bad message header %q: want Content-Length: <bytes> and a blank line", clip(line))
			if rd.pending != "" {
				return nil, &badFrame{msg: bad}
			}
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			switch {
			case err != nil || n < 0:
				bad = fmt.Sprintf("bad Content-Length %q: want a number of bytes", clip(strings.TrimSpace(value)))
			case n > maxBody:
				bad = fmt.Sprintf("message of %d bytes is over the limit of %d bytes", n, maxBody)
			default:
				length = n
			}
		}
	}
	if bad != "" {
		if length >= 0 {
			// Skip the body the header announced, to stay in step.
			if _, err := readFull(rd.r, make([]byte, length)); err != nil {
				return nil, err
			}
		}
		return nil, &badFrame{msg: bad}
	}
	if length < 0 {
		return nil, &badFrame{msg: "message header without Content-Length"}
	}
	body := make([]byte, length)
	if _, err := readFull(rd.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// line reads one header line without its line end, at most maxHeaderLine
// bytes of it (the rest is dropped).
func (rd *reader) line() (string, error) {
	if p := rd.pending; p != "" {
		rd.pending = ""
		return p, nil
	}
	var b []byte
	for {
		chunk, err := rd.r.ReadSlice('\n')
		if len(b) < maxHeaderLine {
			b = append(b, chunk[:min(len(chunk), maxHeaderLine-len(b))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return "", err
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// decode turns a body into a request. A body that is not a request, or
// whose fields have the wrong types, is a *badFrame carrying the seq and
// command it could read.
func decode(body []byte) (godap.Message, error) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, &badFrame{msg: "the message is not a JSON object: " + err.Error()}
	}
	var seq int
	var typ, command string
	_ = json.Unmarshal(env["seq"], &seq)
	_ = json.Unmarshal(env["type"], &typ)
	_ = json.Unmarshal(env["command"], &command)
	switch typ {
	case "request":
	case "response":
		// Answers to reverse requests; the adapter sends none.
		return nil, nil
	default:
		return nil, &badFrame{seq: seq, command: command, msg: fmt.Sprintf("message type %q is not a request", typ)}
	}
	if command == "" {
		return nil, &badFrame{seq: seq, msg: `request without a "command"`}
	}
	m, err := godap.DecodeProtocolMessage(body)
	if err != nil {
		var fe *godap.DecodeProtocolMessageFieldError
		if errors.As(err, &fe) {
			return nil, &badFrame{seq: seq, command: command, msg: "unsupported request " + command}
		}
		return nil, &badFrame{seq: seq, command: command, msg: fmt.Sprintf("bad %s request: %s", command, jsonProblem(err))}
	}
	return m, nil
}

// jsonProblem says which field of a request has the wrong type.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s must be %s, not %s", te.Field, jsonType(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonType(kind string) string {
	switch kind {
	case "int", "int64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return kind
}

// clip shortens a bad header for the error message.
func clip(s string) string {
	if len(s) > 60 {
		return string(bytes.ToValidUTF8([]byte(s[:60]), nil)) + "..."
	}
	return s
}
