package lsp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/render"
	"go.lsp.dev/protocol"
)

// TestRenderPromptCommand renders an open, unsaved buffer through
// forge.renderPrompt: the reply shows the round as the engine would send
// it, with the reply slot the next section sees, and the capability
// announces the command. No gateway is configured, and none is needed.
func TestRenderPromptCommand(t *testing.T) {
	c := startServer(t, options{})
	var init struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	c.mustCall(protocol.MethodInitialize, map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, &init)
	c.notify(protocol.MethodInitialized, map[string]any{})
	found := false
	for _, cmd := range init.Capabilities.ExecuteCommandProvider.Commands {
		found = found || cmd == commandRenderPrompt
	}
	if !found {
		t.Fatalf("the capability does not list %s: %v", commandRenderPrompt, init.Capabilities.ExecuteCommandProvider.Commands)
	}
	const uri = "file:///tmp/render/p.md"
	c.open(uri, modelPrompt+"\n## Next\n\nImprove this: {{ reply }}\n")
	var got renderReply
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRenderPrompt,
		"arguments": []any{map[string]any{"uri": uri}}}, &got)
	if got.Rounds != 2 || got.Stopped != "" || got.Version != 1 {
		t.Fatalf("reply: %+v", got)
	}
	for _, want := range []string{"### round 1 · ## Main", "Say something.", "### round 2 · ## Next", "Improve this: ⟨reply of ## Main⟩"} {
		if !strings.Contains(got.Markdown, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, got.Markdown)
		}
	}
	if !strings.Contains(got.Text, render.SyntheticModel) {
		t.Errorf("without a catalog the model is %s:\n%s", render.SyntheticModel, got.Text)
	}
	// One section, with an input.
	c.mustCall(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRenderPrompt,
		"arguments": []any{map[string]any{"uri": uri, "section": "## Next", "input": "x"}}}, &got)
	if got.Rounds != 0 || !strings.Contains(got.Stopped, "no reply yet") {
		t.Errorf("## Next alone starts without a reply: %+v", got)
	}
	// A document that is not open is an error, not a render of the disk.
	err := c.call(protocol.MethodWorkspaceExecuteCommand, map[string]any{"command": commandRenderPrompt,
		"arguments": []any{map[string]any{"uri": "file:///tmp/render/closed.md"}}}, &json.RawMessage{})
	if err == nil {
		t.Error("rendering a closed document succeeded")
	}
}
