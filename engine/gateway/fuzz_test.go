package gateway

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeResponse: any body either fails as MalformedResponse or yields
// a response whose tool calls all carry a non-blank id, the type
// "function" and arguments that are a JSON object.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}`))
	f.Add([]byte(`{"choices":[{"message":{"content":null,"reasoning":"r"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeResponse(body)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Kind != KindMalformed {
				t.Fatalf("unexpected error type %T %v", err, err)
			}
			return
		}
		for _, c := range r.ToolCalls {
			var obj map[string]json.RawMessage
			if c.ID == "" || c.Type != "function" || json.Unmarshal([]byte(c.Function.Arguments), &obj) != nil || obj == nil {
				t.Fatalf("invalid call accepted: %+v", c)
			}
		}
	})
}
