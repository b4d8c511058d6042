package loop

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzGemmaCalls: parsing a tool_code reply never panics, and every call
// it accepts has an id and JSON-object arguments.
func FuzzGemmaCalls(f *testing.F) {
	f.Add("```tool_code\nsearch(q=\"x\", n=2)\n```")
	f.Add("```tool_code\nf(a=[1, {'k': None}], b=True)\ng()\n```")
	f.Add("plain text")
	f.Fuzz(func(t *testing.T, s string) {
		calls, isFence, err := gemmaCalls(s)
		if !strings.HasPrefix(strings.TrimSpace(s), "```tool_code") && (isFence || err != nil) {
			t.Fatalf("plain text treated as a fence: %q", s)
		}
		for _, c := range calls {
			var obj map[string]any
			if !strings.HasPrefix(c.ID, "call_tool_code_") || json.Unmarshal([]byte(c.Function.Arguments), &obj) != nil {
				t.Fatalf("bad call %+v", c)
			}
		}
	})
}
