package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Streaming (docs/gateway.md#streaming): a request with OnText set asks a
// live gateway for Server-Sent Events and passes each content delta to
// OnText as it arrives, so a host shows the answer while the model writes
// it. The client assembles the events into the chat completion a plain
// request would have got: that assembled answer is what the run goes on
// with and what a cassette or tape records, with the request as it would
// be sent without streaming, so a replay matches either way.

// MaxStreamEvent caps one line of a streamed answer (one event's data);
// the whole answer stays within the response cap. The gateway server
// relays streams under the same cap.
const MaxStreamEvent = 1 << 20

// ErrEventTooLong is a line of an event stream over MaxStreamEvent.
var ErrEventTooLong = fmt.Errorf("a stream event exceeds %d bytes", MaxStreamEvent)

type textKey struct{}

// withText carries the request's OnText to send.
func withText(ctx context.Context, f func(string)) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, textKey{}, f)
}

func textOf(ctx context.Context) func(string) {
	f, _ := ctx.Value(textKey{}).(func(string))
	return f
}

// streamBody is body (a JSON object) asking for a stream with usage.
func streamBody(body []byte) []byte {
	b := bytes.TrimRight(body, " \n\r\t")
	if len(b) < 2 || b[len(b)-1] != '}' {
		return body
	}
	out := make([]byte, 0, len(b)+56)
	out = append(out, b[:len(b)-1]...)
	if len(bytes.TrimSpace(b[1:len(b)-1])) > 0 {
		out = append(out, ',')
	}
	return append(out, `"stream":true,"stream_options":{"include_usage":true}}`...)
}

// chunk is one event of a streamed chat completion.
type chunk struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

type streamCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

var (
	errStreamCut = errors.New("the stream ended before its last event ([DONE] or a finish reason)")
)

// assemble reads an event stream into the body of the equivalent chat
// completion, passing content deltas to onText. An error event becomes
// errorBody (the event's JSON, as a gateway's error answer), which the
// caller reports as a backend failure.
func assemble(r io.Reader, limit int64, onText func(string)) (body, errorBody []byte, err error) {
	br := bufio.NewReaderSize(r, 32<<10)
	var (
		id, model       string
		content, reason bytes.Buffer
		hasContent      bool
		finish          *string
		usage           json.RawMessage
		calls           []*streamCall
		total           int64
		done            bool
		line, long      []byte
	)
	for !done {
		line, err = ReadEventLine(br, &long)
		total += int64(len(line))
		if total > limit {
			return nil, nil, fmt.Errorf("the streamed answer exceeds the %d-byte cap", limit)
		}
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			if errors.Is(err, io.EOF) {
				if finish != nil {
					break // ended without [DONE], but complete
				}
				return nil, nil, errStreamCut
			}
			return nil, nil, err
		}
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok {
			continue // comments, event names, blank separators
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, nil, fmt.Errorf("a stream event is not a JSON object: %v", err)
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return nil, append([]byte(`{"error":`), append(c.Error, '}')...), nil
		}
		if c.ID != "" {
			id = c.ID
		}
		if c.Model != "" {
			model = c.Model
		}
		if len(c.Usage) > 0 && string(c.Usage) != "null" {
			usage = append(json.RawMessage(nil), c.Usage...)
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			if d.Content != nil {
				hasContent = true
				content.WriteString(*d.Content)
				if *d.Content != "" && onText != nil {
					onText(*d.Content)
				}
			}
			for _, s := range []*string{d.ReasoningContent, d.Reasoning} {
				if s != nil {
					reason.WriteString(*s)
				}
			}
			for _, tc := range d.ToolCalls {
				if tc.Index < 0 || tc.Index > 1024 {
					return nil, nil, fmt.Errorf("a tool call delta has index %d", tc.Index)
				}
				for len(calls) <= tc.Index {
					calls = append(calls, &streamCall{Type: "function"})
				}
				sc := calls[tc.Index]
				if tc.ID != "" {
					sc.ID = tc.ID
				}
				if tc.Type != "" {
					sc.Type = tc.Type
				}
				sc.Function.Name += tc.Function.Name
				sc.Function.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				f := *ch.FinishReason
				finish = &f
			}
		}
		if err != nil { // io.EOF after a last line without a line break
			done = true
		}
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if hasContent {
		msg["content"] = content.String()
	}
	if reason.Len() > 0 {
		msg["reasoning_content"] = reason.String()
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": finish}
	out := map[string]any{"id": id, "object": "chat.completion", "model": model, "choices": []any{choice}}
	if usage != nil {
		out["usage"] = usage
	}
	body, err = json.Marshal(out)
	return body, nil, err
}

// ReadEventLine reads one line of an OpenAI event stream (with its line
// break) of at most MaxStreamEvent bytes, or ErrEventTooLong; long keeps
// the buffer of lines longer than br's between calls. The result is
// valid until the next call. Both the client's assembly of a stream and
// the gateway server's relay read streams with it.
func ReadEventLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return frag, err
	}
	buf := append((*long)[:0], frag...)
	for {
		frag, err = br.ReadSlice('\n')
		if len(buf)+len(frag) > MaxStreamEvent {
			return nil, ErrEventTooLong
		}
		buf = append(buf, frag...)
		if err != bufio.ErrBufferFull {
			*long = buf
			return buf, err
		}
	}
}
