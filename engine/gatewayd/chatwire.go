package gatewayd

// The chat route's wire work: reading only what routing needs from a
// request, checking an answer's shape, and swapping the model name in the
// bytes passed through (docs/gateway.md#performance).

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// chatRequest is what the chat route reads from a request body.
type chatRequest struct {
	name  string
	model span // the value of "model" in the body
	// stream and includeUsage are "stream" and
	// "stream_options.include_usage".
	stream, includeUsage bool
}

// parseChat reads a chat request's routing fields and checks the shape
// of its messages, without decoding anything else.
func parseChat(body []byte) (chatRequest, *apiError) {
	var req chatRequest
	var e *apiError
	seenMessages := false
	err := wholeObject(body, func(key []byte, v span) bool {
		val := body[v.start:v.end]
		switch string(key) {
		case "model":
			if req.model.ok() {
				e = errMalformed("model appears twice")
				return false
			}
			name, ok := stringValue(val)
			if !ok || strings.TrimSpace(name) == "" {
				e = errMalformed("model must not be empty")
				return false
			}
			req.name, req.model = name, v
		case "messages":
			seenMessages = true
			e = checkMessages(val)
		case "stream":
			switch string(val) {
			case "true":
				req.stream = true
			case "false", "null":
			default:
				e = errMalformed("stream must be true or false")
			}
		case "stream_options":
			if string(val) == "null" {
				break
			}
			if _, err := eachMember(val, 0, func(k []byte, v span) bool {
				if string(k) == "include_usage" {
					req.includeUsage = string(val[v.start:v.end]) == "true"
				}
				return true
			}); err != nil {
				e = errMalformed("stream_options must be an object")
			}
		}
		return e == nil
	})
	switch {
	case e != nil:
		return req, e
	case err != nil:
		return req, errMalformed("body must be a JSON object")
	case !req.model.ok():
		return req, errMalformed("model must not be empty")
	case !seenMessages:
		return req, errMalformed("messages must be an array of JSON objects")
	}
	return req, nil
}

// checkMessages checks each message is an object with a known role and
// content or a tool or function call.
func checkMessages(b []byte) *apiError {
	var e *apiError
	n, err := eachElement(b, 0, func(i int, v span) error {
		var role []byte
		hasRole, carries := false, false
		_, err := eachMember(b, v.start, func(key []byte, mv span) bool {
			switch string(key) {
			case "role":
				role, hasRole = rawString(b[mv.start:mv.end])
			case "content", "tool_calls", "function_call":
				carries = true
			}
			return true
		})
		switch {
		case err != nil || !hasRole:
			e = errMalformed("messages[%d] must be an object with a string role", i)
		case !knownRole(role):
			e = errMalformed("messages[%d] role %q is not supported", i, role)
		case !carries:
			e = errMalformed("messages[%d] must carry content or a tool/function call", i)
		}
		if e != nil {
			return e
		}
		return nil
	})
	if e != nil {
		return e
	}
	if err != nil {
		return errMalformed("messages must be an array of JSON objects")
	}
	if n == 0 {
		return errMalformed("messages must not be empty")
	}
	return nil
}

func knownRole(r []byte) bool {
	switch string(r) {
	case "system", "user", "assistant", "tool", "function", "developer":
		return true
	}
	return false
}

// checkCompletion checks a backend's chat completion is an object whose
// choices each have an index and a message, delta or text, and finds its
// "model" (a zero span when it has none).
func checkCompletion(b []byte, what string) (span, *apiError) {
	var model, choices span
	err := wholeObject(b, func(key []byte, v span) bool {
		switch string(key) {
		case "model":
			model = v
		case "choices":
			choices = v
		}
		return true
	})
	if err != nil {
		return span{}, errProtocol(what, "the body is not a JSON object; is base_url an OpenAI-compatible API root (with /v1)?")
	}
	if !choices.ok() {
		return span{}, errProtocol(what, "choices must be an array of objects; is base_url an OpenAI-compatible API root (with /v1)?")
	}
	var e *apiError
	_, err = eachElement(b, choices.start, func(_ int, v span) error {
		idx, body := false, false
		_, err := eachMember(b, v.start, func(key []byte, _ span) bool {
			switch string(key) {
			case "index":
				idx = true
			case "message", "delta", "text":
				body = true
			}
			return true
		})
		if err != nil {
			return err
		}
		if !idx || !body {
			e = errStatus("", 502, "upstream choice is missing index or message/delta/text")
			return e
		}
		return nil
	})
	if e != nil {
		return span{}, e
	}
	if err != nil {
		return span{}, errProtocol(what, "choices must be an array of objects; is base_url an OpenAI-compatible API root (with /v1)?")
	}
	return model, nil
}

// writeSwapped writes the JSON object b with the value at model replaced
// by name (added first when the object has no model).
func writeSwapped(w http.ResponseWriter, b []byte, model span, name []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	if model.ok() {
		h["Content-Length"] = []string{strconv.Itoa(len(b) - (model.end - model.start) + len(name))}
		w.WriteHeader(200)
		w.Write(b[:model.start])
		w.Write(name)
		w.Write(b[model.end:])
		return
	}
	i := skipSpace(b, 0) + 1 // after '{'
	sep := ","
	if skipSpace(b, i) < len(b) && b[skipSpace(b, i)] == '}' {
		sep = ""
	}
	w.WriteHeader(200)
	w.Write(b[:i])
	w.Write([]byte(`"model":`))
	w.Write(name)
	w.Write([]byte(sep))
	w.Write(b[i:])
}

// spliced is a request body made of three byte slices, sent without
// copying them into one.
type spliced struct {
	parts [3][]byte
	i     int
}

func (s *spliced) Read(p []byte) (int, error) {
	for s.i < len(s.parts) && len(s.parts[s.i]) == 0 {
		s.i++
	}
	if s.i == len(s.parts) {
		return 0, io.EOF
	}
	n := copy(p, s.parts[s.i])
	s.parts[s.i] = s.parts[s.i][n:]
	return n, nil
}

func (s *spliced) len() int { return len(s.parts[0]) + len(s.parts[1]) + len(s.parts[2]) }
