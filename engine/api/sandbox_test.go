package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/sandbox"
	lua "github.com/yuin/gopher-lua"
)

// TestMatchesSandbox checks the table against the runtime's real sandbox:
// every standard name the table lists exists in a sandboxed state, and
// every name it lists as removed is nil there. If this fails, the table
// and the runtime disagree and the analyzer would give wrong advice.
func TestMatchesSandbox(t *testing.T) {
	s := sandbox.New(context.Background(), sandbox.Options{})
	defer s.Close()
	L := s.L
	get := func(path string) lua.LValue {
		parts := strings.Split(path, ".")
		v := L.GetGlobal(parts[0])
		for _, p := range parts[1:] {
			tb, ok := v.(*lua.LTable)
			if !ok {
				return lua.LNil
			}
			v = tb.RawGetString(p)
		}
		return v
	}
	for _, e := range api.All() {
		if e.Host {
			continue // installed by engine/run per VM, not by the sandbox
		}
		if get(e.Name) == lua.LNil {
			t.Errorf("api lists %s, but the sandbox does not provide it", e.Name)
		}
	}
	for _, name := range api.Removed {
		if get(name) != lua.LNil {
			t.Errorf("api lists %s as removed, but the sandbox provides it", name)
		}
	}
}
