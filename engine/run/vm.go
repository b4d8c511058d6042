package run

import (
	"context"

	sandbox "github.com/forge-lsp/forge-lsp/engine/lua"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	lua "github.com/yuin/gopher-lua"
)

// VMKind tells the H1 VM from section and fanout-arm VMs.
type VMKind int

// VM kinds.
const (
	VMH1 VMKind = iota
	VMSection
	VMArm
)

// VM is one Lua state of a run: the H1 VM, a section entry or a fanout
// arm. A VM is used by one goroutine at a time.
type VM struct {
	// L is the gopher-lua state.
	L *lua.LState
	// Kind is H1, section or arm.
	Kind VMKind
	// Section is the running section (nil for H1).
	Section *parse.Section
	// ID is sys.id.
	ID int64

	sb  *sandbox.State
	ctx context.Context
	r   *runner

	// Tools and Models hold the per-VM state of the tools and models APIs
	// (defined in tools_api.go and models_api.go).
	Tools  toolVM
	Models modelVM
}

// runner is one run in progress.
type runner struct {
	p   *parse.Prompt
	cfg Config

	// tools and models hold the per-run state of the tools and models
	// APIs (defined in tools_api.go and models_api.go).
	tools  toolRun
	models modelRun
}
