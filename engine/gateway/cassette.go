package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
)

// Cassette file format (JSON Lines, one object per line):
//
//	{"cassette":"forge-lsp","version":1}
//	{"seq":1,"method":"POST","endpoint":"chat/completions","request":{...},"status":200,"response":"<body>"}
//
// The first line is a header. Every later line is one exchange in the
// order it completed: the request body as JSON (null for a GET), the HTTP
// status and the raw response body as a string. Headers are never stored,
// so the bearer key cannot reach the file; bodies are still passed through
// Redact in case a gateway echoes the key.
const cassetteVersion = 1

type cassetteHeader struct {
	Cassette string `json:"cassette"`
	Version  int    `json:"version"`
}

type exchange struct {
	Seq      int             `json:"seq"`
	Method   string          `json:"method"`
	Endpoint string          `json:"endpoint"`
	Request  json.RawMessage `json:"request"`
	// canon is Request in canonical form (a replay keeps only this).
	canon    string
	Status   int    `json:"status"`
	Response string `json:"response"`
}

// replayBase is the API root an offline client pretends to talk to.
const replayBase = "http://cassette.invalid/v1"

// NewRecording returns a live client that also appends every exchange to
// the cassette at path (created or truncated). Close the client to flush
// the file.
func NewRecording(cfg Config, path string) (*Client, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, &Error{Kind: KindConfig, Msg: "cannot create cassette: " + err.Error()}
	}
	w := bufio.NewWriter(f)
	rec := &recorder{f: f, w: w, key: cfg.APIKey}
	if err := rec.line(cassetteHeader{Cassette: "forge-lsp", Version: cassetteVersion}); err != nil {
		f.Close()
		return nil, err
	}
	c := New(cfg)
	c.closer, c.rec = rec, rec
	return c, nil
}

type recorder struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	seq int
	key string
	err error
}

func (r *recorder) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return &Error{Kind: KindConfig, Msg: "cannot encode cassette entry: " + err.Error()}
	}
	b = []byte(redactEcho(string(b), r.key))
	b = append(b, '\n')
	if _, err := r.w.Write(b); err != nil {
		return &Error{Kind: KindConfig, Msg: "cannot write cassette: " + err.Error()}
	}
	return nil
}

func (r *recorder) record(method, endpoint string, req []byte, status int, resp []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	reqJSON := json.RawMessage("null")
	if len(req) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, req) == nil {
			reqJSON = buf.Bytes()
		}
	}
	if err := r.line(exchange{Seq: r.seq, Method: method, Endpoint: endpoint, Request: reqJSON, Status: status, Response: string(resp)}); err != nil && r.err == nil {
		r.err = err
	}
	// Flush every exchange: a run that fails later still leaves a usable
	// cassette of everything up to the failure.
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = &Error{Kind: KindConfig, Msg: "cannot write cassette: " + err.Error()}
	}
}

func (r *recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ferr := r.w.Flush()
	cerr := r.f.Close()
	if r.err != nil {
		return r.err
	}
	if ferr != nil {
		return &Error{Kind: KindConfig, Msg: "cannot write cassette: " + ferr.Error()}
	}
	if cerr != nil {
		return &Error{Kind: KindConfig, Msg: "cannot close cassette: " + cerr.Error()}
	}
	return nil
}

// NewReplay returns an offline client that answers from the cassette at
// path. A request that matches no unused recorded exchange fails with a
// KindReplay error that says where the run diverged. Requests are matched
// by method, endpoint and exact body (with the per-run envelope nonce
// blanked), not by position, so concurrent fanout arms replay regardless
// of their scheduling.
func NewReplay(path string) (*Client, error) {
	// The cassette is a repository file: opened only when regular and
	// within fsread.Cassette's cap, and streamed a line at a time so that
	// replay holds each exchange once (docs/security.md#reads).
	f, _, err := fsread.Open(path, fsread.Cassette)
	if err != nil {
		return nil, &Error{Kind: KindConfig, Msg: "cannot read cassette: " + err.Error(), err: err}
	}
	defer f.Close()
	rp := &replayer{path: path}
	br := bufio.NewReaderSize(fsread.Limit(path, f, fsread.Cassette), 64<<10)
	for i := 0; ; i++ {
		ln, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, &Error{Kind: KindConfig, Msg: "cannot read cassette: " + rerr.Error(), err: rerr}
		}
		ln = bytes.TrimSpace(ln)
		switch {
		case i == 0:
			if len(ln) == 0 {
				return nil, &Error{Kind: KindConfig, Msg: fmt.Sprintf("%s is not a forge-lsp cassette (empty file)", path)}
			}
			var h cassetteHeader
			if json.Unmarshal(ln, &h) != nil || h.Cassette != "forge-lsp" {
				return nil, &Error{Kind: KindConfig, Msg: fmt.Sprintf("%s is not a forge-lsp cassette (bad header line)", path)}
			}
			if h.Version != cassetteVersion {
				return nil, &Error{Kind: KindConfig, Msg: fmt.Sprintf("%s: unsupported cassette version %d (this build reads %d)", path, h.Version, cassetteVersion)}
			}
		case len(ln) > 0:
			var ex exchange
			if err := json.Unmarshal(ln, &ex); err != nil {
				return nil, &Error{Kind: KindConfig, Msg: fmt.Sprintf("%s:%d: malformed cassette entry: %v", path, i+1, err)}
			}
			// Matched in canonical form only: computed once here, not on
			// every request, and the raw body is not kept.
			ex.canon, ex.Request = canonical(ex.Request), nil
			rp.exchanges = append(rp.exchanges, ex)
		}
		if rerr == io.EOF {
			break
		}
	}
	rp.used = make([]bool, len(rp.exchanges))
	c := New(Config{BaseURL: replayBase})
	c.replay = rp
	return c, nil
}

type replayer struct {
	mu        sync.Mutex
	path      string
	exchanges []exchange
	used      []bool
	served    int
}

// nonceRE matches the run's envelope tag. Every run draws a fresh nonce,
// so requests that carry untrusted output can only match their recording
// once the nonce is blanked out on both sides.
var nonceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`untrusted_input_[0-9a-f]{32}`) })

func canonical(b []byte) string {
	if len(b) == 0 {
		return "null"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return nonceRE().ReplaceAllString(string(b), "untrusted_input_NONCE")
	}
	return nonceRE().ReplaceAllString(buf.String(), "untrusted_input_NONCE")
}

func (r *replayer) serve(method, endpoint string, body []byte) (int, []byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := canonical(body)
	var nearest *exchange
	for i := range r.exchanges {
		ex := &r.exchanges[i]
		if r.used[i] || ex.Method != method || ex.Endpoint != endpoint {
			continue
		}
		if ex.canon == want {
			r.used[i] = true
			r.served++
			return ex.Status, []byte(ex.Response), nil
		}
		if nearest == nil {
			nearest = ex
		}
	}
	msg := fmt.Sprintf("replay diverged at request %d (%s %s): cassette %s has no unused matching exchange", r.served+1, method, endpoint, r.path)
	div := &Divergence{Request: r.served + 1, Method: method, Endpoint: endpoint, Sent: want}
	if nearest != nil {
		div.Recorded = nearest.canon
	}
	if nearest == nil {
		msg += fmt.Sprintf("; it records no further %s %s requests (the run makes more model calls than the recording)", method, endpoint)
	} else {
		msg += fmt.Sprintf("; nearest recorded request (seq %d) differs %s", nearest.Seq, firstDiff(nearest.canon, want))
	}
	return 0, nil, &Error{Kind: KindReplay, Msg: msg, Divergence: div}
}

// firstDiff describes the first differing byte of two request bodies with
// a little context, so the user sees which message or field changed.
func firstDiff(recorded, got string) string {
	i := 0
	for i < len(recorded) && i < len(got) && recorded[i] == got[i] {
		i++
	}
	from := max(0, i-40)
	snip := func(s string) string {
		end := min(len(s), i+40)
		if from >= end {
			return "<end>"
		}
		return strings.ToValidUTF8(s[from:end], "?")
	}
	return fmt.Sprintf("at byte %d: recorded …%s… but the run sent …%s…", i, snip(recorded), snip(got))
}

func (r *replayer) unused() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, u := range r.used {
		if !u {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return &Error{Kind: KindReplay, Msg: fmt.Sprintf("replay: the run ended with %d recorded exchange(s) of %s never requested (the run diverged from the recording)", n, r.path)}
}

// toolMethod and toolEndpoint mark a local tool call's result in a
// cassette: a workspace command or web_fetch runs on this machine, not at
// the gateway, so its result is recorded beside the model exchanges and a
// replay answers the call from the cassette instead of running anything
// (docs/security.md#runs).
const (
	toolMethod   = "TOOL"
	toolEndpoint = "tool/"
)

// ToolResult is one local tool call's outcome as a cassette holds it.
type ToolResult struct {
	// Text is the tool's output; Untrusted its trust marking.
	Text      string `json:"text,omitempty"`
	Untrusted bool   `json:"untrusted,omitempty"`
	// Error is the failure message when the call failed, ErrorKind its
	// tools.ErrorKind.
	Error     string `json:"error,omitempty"`
	ErrorKind int    `json:"error_kind,omitempty"`
}

type toolRequest struct {
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
}

// Replaying reports whether c answers from a cassette and makes no live
// call: a replay, or an offline retake (tape.go).
func (c *Client) Replaying() bool { return c.Offline() }

// Recording reports whether c records its exchanges: to a cassette, or
// to a retake's tape.
func (c *Client) Recording() bool { return c != nil && (c.recorder() != nil || c.retake != nil) }

// RecordTool appends a local tool call's result to a recording cassette
// or a retake's tape; on any other client it does nothing.
func (c *Client) RecordTool(tool, arguments string, res ToolResult) {
	req, _ := json.Marshal(toolRequest{Tool: tool, Arguments: arguments})
	resp, _ := json.Marshal(res)
	if c.retake != nil {
		c.retake.Record.add(toolMethod, toolEndpoint+tool, req, 200, resp)
		return
	}
	if rec := c.recorder(); rec != nil {
		rec.record(toolMethod, toolEndpoint+tool, req, 200, resp)
	}
}

// ReplayTool answers a local tool call from the cassette (or a retake's
// prior tape): the first unused recorded call of the tool with the same
// arguments. ok is false when it holds none (or c is neither replaying
// nor retaking).
func (c *Client) ReplayTool(tool, arguments string) (res ToolResult, ok bool) {
	if c == nil {
		return res, false
	}
	if c.retake != nil {
		return c.retake.tool(tool, arguments)
	}
	if c.replay == nil {
		return res, false
	}
	req, _ := json.Marshal(toolRequest{Tool: tool, Arguments: arguments})
	return c.replay.tool(tool, req)
}
