package gatewayd

// Reading and writing HTTP/1.1 heads by hand for the lean path: only the
// plain forms are read here; anything else is left to net/http
// (docs/gateway.md#performance).

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// errOddHead is a head the lean path does not read itself: larger than
// its buffer, or with a bare LF line end.
var errOddHead = errors.New("head not read by the lean path")

// peekHead waits until a whole head (up to its blank line) is buffered in
// br and returns it without consuming it. partial, when not nil, is
// called once when a read ended inside the head (to set the head's
// deadline).
func peekHead(br *bufio.Reader, partial func()) ([]byte, error) {
	scan, lineStart := 0, 0
	for {
		b, _ := br.Peek(br.Buffered())
		for {
			i := bytes.IndexByte(b[scan:], '\n')
			if i < 0 {
				scan = len(b)
				break
			}
			j := scan + i
			if j == 0 || b[j-1] != '\r' || j-1 == 0 {
				return nil, errOddHead // a bare LF, or an empty line first
			}
			if j-1 == lineStart {
				return b[:j+1], nil
			}
			lineStart, scan = j+1, j+1
		}
		if len(b) >= br.Size() {
			return nil, errOddHead
		}
		if partial != nil && len(b) > 0 {
			partial()
			partial = nil
		}
		if _, err := br.Peek(len(b) + 1); err != nil {
			return nil, err
		}
	}
}

// eachHeader calls f with each header line's name and value (optional
// white space trimmed) after the head's first line, until f returns
// false. It reports false for a line that is not a plain "name: value"
// (no colon, a folded line, a name with other than token characters).
func eachHeader(head []byte, f func(name, value []byte) bool) bool {
	i := bytes.IndexByte(head, '\n') + 1
	for i < len(head) {
		j := bytes.IndexByte(head[i:], '\n')
		line := head[i : i+j-1] // without CRLF
		i += j + 1
		if len(line) == 0 {
			return true
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !tokenBytes(line[:colon]) {
			return false
		}
		v := line[colon+1:]
		for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
			v = v[1:]
		}
		for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
			v = v[:len(v)-1]
		}
		if !f(line[:colon], v) {
			return true
		}
	}
	return true
}

// tokenBytes is a header name of token characters (RFC 9110).
func tokenBytes(b []byte) bool {
	for _, c := range b {
		if !tokenChar[c] {
			return false
		}
	}
	return true
}

var tokenChar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return
}()

// asciiEqualFold compares a header name with a lower-case name.
func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// parseLength reads a Content-Length value: digits only.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return -1, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return -1, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// hasToken reports whether the comma-separated list v holds tok (lower
// case), ignoring case.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		i := bytes.IndexByte(v, ',')
		if i < 0 {
			i = len(v)
		}
		t := bytes.TrimSpace(v[:i])
		if asciiEqualFold(t, tok) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}

// leanRequest is what the lean path reads from a request head.
type leanRequest struct {
	n             int   // the head's length
	contentLength int64 // the body's
	close         bool  // Connection: close
	auth          []byte
}

// chatLine is the request line the lean path serves.
const chatLine = "POST /v1/chat/completions HTTP/1.1\r\n"

// leanHead reads a request head the lean path serves: a chat request
// over HTTP/1.1 with one Host, one Content-Length within the request
// limit, at most one Authorization, no Transfer-Encoding, Expect or
// Upgrade, and a Connection of keep-alive or close. ok false leaves the
// request to net/http, which answers every other form (and every
// malformed one) as it always has.
func leanHead(head []byte) (r leanRequest, ok bool) {
	if !bytes.HasPrefix(head, []byte(chatLine)) {
		return r, false
	}
	for i, c := range head {
		if c < ' ' && c != '\t' && c != '\r' && c != '\n' || c == 0x7f || c == '\r' && (i+1 == len(head) || head[i+1] != '\n') {
			return r, false
		}
	}
	r.n, r.contentLength = len(head), -1
	hosts, auths := 0, 0
	ok = true
	whole := eachHeader(head, func(name, v []byte) bool {
		switch {
		case asciiEqualFold(name, "content-length"):
			if r.contentLength >= 0 {
				ok = false
			} else {
				r.contentLength, ok = parseLength(v)
				ok = ok && r.contentLength <= MaxRequestBytes
			}
		case asciiEqualFold(name, "host"):
			hosts++
			ok = hosts == 1 && validHost(v)
		case asciiEqualFold(name, "authorization"):
			auths++
			ok = auths == 1
			r.auth = v
		case asciiEqualFold(name, "connection"):
			switch {
			case asciiEqualFold(v, "close"):
				r.close = true
			case asciiEqualFold(v, "keep-alive"):
			default:
				ok = false
			}
		case asciiEqualFold(name, "transfer-encoding"), asciiEqualFold(name, "expect"), asciiEqualFold(name, "upgrade"):
			ok = false
		}
		return ok
	})
	return r, ok && whole && hosts == 1 && r.contentLength >= 0
}

// validHost is a Host value of the characters host names, IP addresses
// (with [] for IPv6) and ports use.
func validHost(v []byte) bool {
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_') {
			return false
		}
	}
	return true
}

// writeHead writes a response head with a JSON body of n bytes.
func writeHead(bw *bufio.Writer, status int, n int, close bool, retryAfter string) {
	bw.WriteString("HTTP/1.1 ")
	bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(status), 10))
	bw.WriteByte(' ')
	bw.WriteString(http.StatusText(status))
	bw.WriteString("\r\nContent-Type: application/json\r\nDate: ")
	bw.Write(httpDate())
	bw.WriteString("\r\nContent-Length: ")
	bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(n), 10))
	if retryAfter != "" && validHeaderValue(retryAfter) {
		bw.WriteString("\r\nRetry-After: ")
		bw.WriteString(retryAfter)
	}
	if close {
		bw.WriteString("\r\nConnection: close")
	}
	bw.WriteString("\r\n\r\n")
}

// dateCache is the Date header of the current second.
type dateCache struct {
	sec int64
	b   []byte
}

var lastDate atomic.Pointer[dateCache]

// httpDate is the Date header's value, formatted once a second.
func httpDate() []byte {
	now := time.Now()
	if d := lastDate.Load(); d != nil && d.sec == now.Unix() {
		return d.b
	}
	d := &dateCache{sec: now.Unix(), b: now.UTC().AppendFormat(nil, http.TimeFormat)}
	lastDate.Store(d)
	return d.b
}
