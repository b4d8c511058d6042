package tools

import (
	"encoding/json"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// TestRegistryWantsSchemaObjects: parameters are accepted exactly when
// they are one JSON object, as decoding them into a map would accept them.
func TestRegistryWantsSchemaObjects(t *testing.T) {
	for _, raw := range []string{
		`{"type":"object"}`, " \n\t{}", `{"a":{"b":[1,2]}} `,
		``, `null`, `[]`, `"x"`, `1`, `{`, `{"a":1,}`, `{} {}`, `{}x`, `nul`, ` `,
	} {
		var obj map[string]json.RawMessage
		want := json.Unmarshal([]byte(raw), &obj) == nil && obj != nil
		if got := isObject([]byte(raw)); got != want {
			t.Errorf("isObject(%q) = %v, want %v", raw, got, want)
		}
		c := &CommandTool{spec: toolrule.WorkspaceSpec{Name: "c", Parameters: json.RawMessage(raw)}}
		if _, err := NewRegistry(c); (err == nil) != want {
			t.Errorf("NewRegistry with parameters %q: %v", raw, err)
		}
	}
}
