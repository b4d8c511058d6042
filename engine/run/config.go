package run

import (
	"time"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/loop"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"github.com/forge-lsp/forge-lsp/engine/sandbox"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

// Config holds everything a run needs besides the prompt. The caller owns
// all of it; a run keeps no global state.
type Config struct {
	// Input is the run input: the Lua global `args` and `{{ args }}`.
	Input string
	// Execution is sys.execution (an id chosen by the host).
	Execution string
	// Store is the run's file store; nil means a fresh empty store. The
	// caller may fill it before the run and read it afterwards.
	Store *store.Store
	// Observer receives progress events; nil means none.
	Observer Observer
	// Limits are the run limits; zero fields take the defaults.
	Limits Limits
	// Now is the clock (tests pin it); nil means time.Now.
	Now func() time.Time
	// Nonce, when set, is the run's envelope nonce (32 hex digits) instead
	// of a random one: a host that re-runs a prompt from its recording
	// (the debugger) pins it, with Now and Execution, so that the re-run
	// sends the same requests.
	Nonce string
	// Models configures model access (gateway client, catalog, picker).
	// Defined by the models API (models_api.go).
	Models ModelConfig
	// Tools configures tool access (registry, picker, near-duplicate
	// threshold). Defined by the tools API (tools_api.go).
	Tools ToolConfig
}

// Limits are the run limits (docs/language.md#limits) plus the Go engine's
// guards. A zero field means the default.
type Limits struct {
	// MaxToolIterations is the tool-loop round cap for final prose (24);
	// frontmatter max_tool_iterations overrides it.
	MaxToolIterations int
	// MaxToolCallsPerRound caps the tool calls one model reply may
	// request (32): each may start a process or a fetch.
	MaxToolCallsPerRound int
	// FanoutConcurrency is how many fanout arms run at once (8).
	FanoutConcurrency int
	// MaxResponseBytes caps one completion body (16 MiB).
	MaxResponseBytes int64
	// RequestTimeout bounds one completion (120 s).
	RequestTimeout time.Duration
	// LuaLogEvents is the per-VM log budget (1024 events, ×256 bytes).
	LuaLogEvents int
	// Instructions is the per-VM instruction budget (10,000,000: 1,000
	// firings of a hook every 10,000 instructions).
	Instructions int64
	// RunInstructions is the instruction budget of the whole run, every
	// VM together: H1, sections, fanout arms, handlers, chains
	// (100,000,000).
	RunInstructions int64
	// FanoutArms caps the fanout arms of the run, nested ones included
	// (1,000).
	FanoutArms int
	// Timeout is the run's wall-clock deadline; zero means none. Passing
	// it fails the run with Quota.
	Timeout time.Duration
	// CPU caps the CPU time of the run's VMs, host functions included
	// (20 s; enforced on Linux).
	CPU time.Duration
	// HeapBytes is how far the process heap may grow during the run before
	// the run fails with Quota (192 MiB). gopher-lua has no allocator hook,
	// so this replaces upstream's 64 MiB per-VM cap.
	HeapBytes int64
	// MaxStringBytes caps one string made by a host function (string.rep,
	// table.concat, string.format, store writes, ...): 16 MiB.
	MaxStringBytes int
	// MaxSectionEntries caps section entries per run (1,000).
	MaxSectionEntries int
	// StoreFileBytes caps one store file; StoreTotalBytes the whole store.
	StoreFileBytes, StoreTotalBytes int64
}

// Default values of Limits. Each is the constant of the package that
// enforces it (loop, gateway, sandbox, store, rules), so a default is
// written once; the ones only this package enforces are set here.
const (
	defaultMaxToolIterations = loop.DefaultMaxIterations
	// DefaultMaxToolCallsPerRound is docs/language.md#limits' tool calls
	// per model reply.
	DefaultMaxToolCallsPerRound = 32
	defaultFanoutConcurrency    = 8
	defaultMaxResponseBytes     = gateway.DefaultMaxResponseBytes
	defaultRequestTimeout       = gateway.DefaultChatTimeout
	defaultLuaLogEvents         = 1024
	defaultInstructions         = sandbox.DefaultInstructions
	defaultRunInstructions      = sandbox.DefaultRunInstructions
	defaultFanoutArms           = sandbox.DefaultFanoutArms
	defaultHeapBytes            = 192 << 20
	defaultMaxStringBytes       = sandbox.DefaultMaxString
	defaultMaxSectionEntries    = rules.MaxSectionEntries
	defaultStoreFileBytes       = store.DefaultFileBytes
	defaultStoreTotalBytes      = store.DefaultTotalBytes
	// maxDepth is the execute/fanout nesting cap.
	maxDepth = rules.MaxDepth
	// logMessageRunes caps one log message; logBytesPerEvent sizes the
	// cumulative byte budget.
	logMessageRunes  = rules.LogMessageRunes
	logBytesPerEvent = 256
)

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	set := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
	}
	set64 := func(p *int64, d int64) {
		if *p <= 0 {
			*p = d
		}
	}
	set(&l.MaxToolIterations, defaultMaxToolIterations)
	set(&l.MaxToolCallsPerRound, DefaultMaxToolCallsPerRound)
	set(&l.FanoutConcurrency, defaultFanoutConcurrency)
	set64(&l.MaxResponseBytes, defaultMaxResponseBytes)
	if l.RequestTimeout <= 0 {
		l.RequestTimeout = defaultRequestTimeout
	}
	set(&l.LuaLogEvents, defaultLuaLogEvents)
	set64(&l.Instructions, defaultInstructions)
	set64(&l.RunInstructions, defaultRunInstructions)
	set(&l.FanoutArms, defaultFanoutArms)
	set64(&l.HeapBytes, defaultHeapBytes)
	set(&l.MaxStringBytes, defaultMaxStringBytes)
	set(&l.MaxSectionEntries, defaultMaxSectionEntries)
	set64(&l.StoreFileBytes, defaultStoreFileBytes)
	set64(&l.StoreTotalBytes, defaultStoreTotalBytes)
	return l
}

// budget returns the sandbox's run budget limits.
func (l Limits) budget() sandbox.Limits {
	return sandbox.Limits{Instructions: l.Instructions, RunInstructions: l.RunInstructions, FanoutArms: int64(l.FanoutArms),
		HeapBytes: l.HeapBytes, MaxString: l.MaxStringBytes, Timeout: l.Timeout, CPU: l.CPU}
}
