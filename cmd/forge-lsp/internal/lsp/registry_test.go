package lsp

import (
	"context"
	"encoding/json"
	"testing"

	"go.lsp.dev/protocol"
)

// This file is a whole throwaway feature, as a contributor would add one
// (docs/architecture.md#where-to-add-things): a handler over the
// document's snapshot, its registry entry with what it needs and the
// capability it advertises. No other file names it; TestOneFileFeature
// proves the server serves it.

const methodThrowaway = "forge/throwawayFindings"

var _ = register(func() []feature {
	return []feature{feature{method: methodThrowaway,
		serve: docMethod(handle((*server).throwaway), needFindings),
		advertise: func(c *serverCapabilities) {
			c.Experimental = map[string]any{"throwawayFindings": true}
		}}}
})

// throwaway answers how many findings the document has, and whether they
// were ready before the handler ran (the registry's needs).
func (s *server) throwaway(ctx context.Context, p *protocol.TextDocumentPositionParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, nil
	}
	f, ready := snap.findings.peek()
	return map[string]any{"findings": len(f), "ready": ready, "offset": offsetOf(snap.file, p.Position)}, nil
}

// TestOneFileFeature: a feature registered in one file is advertised in
// the initialize reply and served on a document, with the derived data
// it declared computed before its handler runs.
func TestOneFileFeature(t *testing.T) {
	c := startServer(t, options{})
	var res struct {
		Capabilities struct {
			Experimental  map[string]bool `json:"experimental"`
			HoverProvider bool            `json:"hoverProvider"`
		} `json:"capabilities"`
	}
	c.mustCall(protocol.MethodInitialize, map[string]any{"processId": nil, "capabilities": map[string]any{}}, &res)
	c.notify(protocol.MethodInitialized, map[string]any{})
	if !res.Capabilities.Experimental["throwawayFindings"] || !res.Capabilities.HoverProvider {
		t.Fatalf("capabilities do not advertise the registered features: %+v", res.Capabilities)
	}
	uri := "file:///registry/p.md"
	c.open(uri, "---\npromptforge: 1\nname: p\n---\n\n# P\n\n```lua\nlocal unused = 1\n```\n")
	var got struct {
		Findings int  `json:"findings"`
		Ready    bool `json:"ready"`
		Offset   int  `json:"offset"`
	}
	c.mustCall(methodThrowaway, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 8, "character": 6}}, &got)
	if !got.Ready || got.Findings == 0 || got.Offset != 50 {
		t.Fatalf("%s = %+v, want ready findings (the unused local) at offset 50", methodThrowaway, got)
	}
	var raw json.RawMessage
	if err := c.call("forge/notRegistered", map[string]any{}, &raw); rpcCode(err) != -32601 {
		t.Fatalf("an unregistered method: %v, want MethodNotFound", err)
	}
}
