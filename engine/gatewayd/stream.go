package gatewayd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// MaxStreamEvent caps one line of an endpoint's event stream (one chunk),
// as the engine's client caps the streams it reads; the whole stream is
// capped at MaxUpstreamBytes and, like any backend exchange, at the
// upstream timeout (docs/gateway.md#streaming).
const MaxStreamEvent = gateway.MaxStreamEvent

// chatStream answers a "stream": true request with Server-Sent Events in
// the OpenAI chunk format. An endpoint that streams is relayed chunk by
// chunk; one that answers with a whole completion is converted.
func (g *Gateway) chatStream(w http.ResponseWriter, r *http.Request, m *model, out *spliced, includeUsage bool) *apiError {
	ctx, cancel := context.WithTimeout(r.Context(), g.timeout)
	defer cancel()
	resp, e := g.send(ctx, m, out, acceptStream)
	if e != nil {
		return e
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		g.relay(ctx, r.Context(), w, resp.Body, m)
		return nil
	}
	buf := getBuffer()
	defer putBuffer(buf)
	raw, e := readUpstream(resp, buf, m.what)
	if e != nil {
		return e
	}
	raw = redactSpellings(raw, m.ep.spellings)
	if _, e := checkCompletion(raw, m.what); e != nil {
		return e
	}
	return convertToStream(w, raw, m.cfg.Name, includeUsage)
}

var acceptStream = []string{"text/event-stream"}

// startStream writes the event-stream head.
func startStream(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"} // proxies in front must not buffer either
	w.WriteHeader(200)
}

// relay passes an endpoint's event stream to the caller event by event,
// with the caller's model name in each chunk, flushing at the end of each
// event. A line over MaxStreamEvent, a stream over MaxUpstreamBytes, one
// that outlives the upstream timeout or breaks off ends with an error
// event; when the caller goes away the endpoint's request is cancelled at
// once (its connection is closed).
func (g *Gateway) relay(ctx, caller context.Context, w http.ResponseWriter, body io.Reader, m *model) {
	startStream(w)
	rc := http.NewResponseController(w)
	rc.Flush()
	br := bufio.NewReaderSize(body, 32<<10)
	var long []byte
	total := 0
	for {
		line, err := gateway.ReadEventLine(br, &long)
		total += len(line)
		if err == nil && total > MaxUpstreamBytes {
			err = errStreamTooLong
		}
		if len(line) > 0 && err == nil || errors.Is(err, io.EOF) && len(line) > 0 {
			if werr := writeEventLine(w, redactSpellings(line, m.ep.spellings), m.nameJSON); werr != nil {
				return // the caller is gone
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				if rc.Flush() != nil {
					return
				}
			}
		}
		if err == nil {
			continue
		}
		switch {
		case errors.Is(err, io.EOF):
			rc.Flush()
		case caller.Err() != nil:
			// The caller went away; closing the body cancels upstream.
		case errors.Is(err, gateway.ErrEventTooLong):
			writeStreamError(w, errProtocol("", fmt.Sprintf("a stream event exceeds %d bytes", MaxStreamEvent)))
		case errors.Is(err, errStreamTooLong):
			writeStreamError(w, errProtocol("", fmt.Sprintf("the stream exceeds %d bytes", MaxUpstreamBytes)))
		case ctx.Err() != nil:
			writeStreamError(w, &apiError{status: 504, typ: "server_error", code: "upstream_timeout", msg: "upstream stream did not end within " + g.timeout.String()})
		default:
			writeStreamError(w, errTransport("the stream broke off: "))
		}
		rc.Flush()
		return
	}
}

var errStreamTooLong = errors.New("stream too long")

// writeEventLine writes one line of an event stream; a data line holding
// a JSON object gets the caller's model name in place of the endpoint's.
func writeEventLine(w io.Writer, line, name []byte) error {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		_, err := w.Write(line)
		return err
	}
	lead := 0
	if len(data) > 0 && data[0] == ' ' {
		lead = 1
	}
	var model span
	eachMember(data, 0, func(key []byte, v span) bool {
		if string(key) == "model" {
			model = v
			return false
		}
		return true
	})
	if !model.ok() || data[model.start] != '"' {
		_, err := w.Write(line)
		return err
	}
	cut := len(line) - len(data)
	w.Write(line[:cut+lead])
	w.Write(data[lead:model.start])
	w.Write(name)
	_, err := w.Write(data[model.end:])
	return err
}

// writeStreamError ends a stream with an error event in the OpenAI
// envelope, which the OpenAI SDKs raise as an API error.
func writeStreamError(w io.Writer, e *apiError) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": e.msg, "type": e.typ, "code": e.code}})
	w.Write([]byte("data: "))
	w.Write(b)
	w.Write([]byte("\n\n"))
}

// convertToStream sends a whole chat completion as the chunks a streaming
// endpoint would have sent: per choice one delta with the role, content,
// tool calls (each with its index) and any other message field, then one
// with the finish_reason; the usage chunk when asked for; then [DONE].
func convertToStream(w http.ResponseWriter, raw []byte, name string, includeUsage bool) *apiError {
	var c struct {
		ID                string          `json:"id"`
		Created           int64           `json:"created"`
		SystemFingerprint json.RawMessage `json:"system_fingerprint"`
		Choices           []struct {
			Index        int                        `json:"index"`
			Message      map[string]json.RawMessage `json:"message"`
			Delta        map[string]json.RawMessage `json:"delta"`
			Text         json.RawMessage            `json:"text"`
			FinishReason json.RawMessage            `json:"finish_reason"`
			Logprobs     json.RawMessage            `json:"logprobs"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return errProtocol("", "the completion cannot be converted to a stream: "+err.Error())
	}
	type chunk struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint json.RawMessage `json:"system_fingerprint,omitempty"`
		Choices           []any           `json:"choices"`
		Usage             json.RawMessage `json:"usage,omitempty"`
	}
	type choice struct {
		Index        int             `json:"index"`
		Delta        map[string]any  `json:"delta"`
		Logprobs     json.RawMessage `json:"logprobs,omitempty"`
		FinishReason json.RawMessage `json:"finish_reason"`
	}
	null := json.RawMessage("null")
	var events [][]byte
	add := func(ch chunk) {
		ch.ID, ch.Object, ch.Created, ch.Model = c.ID, "chat.completion.chunk", c.Created, name
		if len(c.SystemFingerprint) > 0 && string(c.SystemFingerprint) != "null" {
			ch.SystemFingerprint = c.SystemFingerprint
		}
		b, _ := json.Marshal(ch)
		events = append(events, b)
	}
	for _, ch := range c.Choices {
		msg := ch.Message
		if msg == nil {
			msg = ch.Delta
		}
		delta := map[string]any{}
		for k, v := range msg {
			delta[k] = v
		}
		if msg == nil && len(ch.Text) > 0 {
			delta["content"] = ch.Text
		}
		if _, ok := delta["role"]; !ok {
			delta["role"] = "assistant"
		}
		if tc, ok := msg["tool_calls"]; ok && string(tc) != "null" {
			var calls []map[string]json.RawMessage
			if err := json.Unmarshal(tc, &calls); err != nil {
				return errProtocol("", "tool_calls must be an array of objects")
			}
			for j, call := range calls {
				if call == nil {
					return errProtocol("", "tool_calls must be an array of objects")
				}
				call["index"] = json.RawMessage(strconv.Itoa(j))
			}
			delta["tool_calls"] = calls
		}
		add(chunk{Choices: []any{choice{Index: ch.Index, Delta: delta, Logprobs: ch.Logprobs, FinishReason: null}}})
		finish := ch.FinishReason
		if len(finish) == 0 {
			finish = null
		}
		add(chunk{Choices: []any{choice{Index: ch.Index, Delta: map[string]any{}, FinishReason: finish}}})
	}
	if includeUsage && len(c.Usage) > 0 && string(c.Usage) != "null" {
		add(chunk{Choices: []any{}, Usage: c.Usage})
	}
	startStream(w)
	for _, b := range events {
		w.Write([]byte("data: "))
		w.Write(b)
		w.Write([]byte("\n\n"))
	}
	w.Write([]byte("data: [DONE]\n\n"))
	http.NewResponseController(w).Flush()
	return nil
}
