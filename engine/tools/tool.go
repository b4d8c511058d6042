// Package tools holds everything the engine knows about tools: the Tool
// interface and registry, the untrusted-output envelope, the built-in
// web_search and web_fetch tools and the commands behind workspace tools
// declared in forge-tools.json. What the analyzer shares (alias grammar,
// near-duplicate test, the capability picker, the catalog data and the
// workspace file format) is in engine/toolrule.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// Output is a tool result. Its trust is fixed at construction (Trusted or
// Untrusted): there is no way to build an Output without deciding.
type Output struct {
	text      string
	untrusted bool
	set       bool
}

// Trusted returns output that reaches the model verbatim.
func Trusted(text string) Output { return Output{text: text, set: true} }

// Untrusted returns output that is wrapped in the run's envelope before it
// reaches the model.
func Untrusted(text string) Output { return Output{text: text, untrusted: true, set: true} }

// Text is the raw result.
func (o Output) Text() string { return o.text }

// IsUntrusted reports the trust marking. The zero Output (never built by
// Trusted or Untrusted) counts as untrusted: failing closed.
func (o Output) IsUntrusted() bool { return o.untrusted || !o.set }

// Tool is a callable tool. Implementations must be safe for concurrent
// calls: fanout arms share the registry.
type Tool interface {
	// ID is the stable identity (server + name).
	ID() toolrule.ID
	// WireName is the function name sent on the wire; it matches
	// [A-Za-z0-9_.-]+.
	WireName() string
	// Description is the catalog description the picker indexes.
	Description() string
	// Parameters is the JSON Schema of the arguments (a JSON object).
	Parameters() json.RawMessage
	// Call runs the tool with the model's arguments (a JSON object text).
	Call(ctx context.Context, arguments string) (Output, error)
}

// ErrorKind classifies a tool failure (docs/language.md#errors, Tool).
type ErrorKind int

const (
	// ErrOther is any other failure.
	ErrOther ErrorKind = iota
	// ErrInvalidArguments is a validation failure before the call.
	ErrInvalidArguments
	// ErrBackend is a failure reported by the tool's backend.
	ErrBackend
	// ErrTransport is a network failure or timeout (the only retryable kind).
	ErrTransport
	// ErrCancelled is a call stopped by cancellation.
	ErrCancelled
)

// Error is a tool failure.
type Error struct {
	Kind ErrorKind
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports transport failures.
func (e *Error) Retryable() bool { return e.Kind == ErrTransport }

func invalidArgs(format string, a ...any) *Error {
	return &Error{Kind: ErrInvalidArguments, Msg: fmt.Sprintf(format, a...)}
}

// Registry is the live set of tools, keyed by ID. It is immutable after
// NewRegistry, so concurrent readers need no lock.
type Registry struct {
	tools []Tool
	byID  map[toolrule.ID]Tool
}

// NewRegistry checks and indexes tools (docs/language.md#run-entry): ids must be
// unique and wire names valid.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{byID: map[toolrule.ID]Tool{}}
	for _, t := range ts {
		id := t.ID()
		if _, dup := r.byID[id]; dup {
			return nil, fmt.Errorf("duplicate live tool id %s", id)
		}
		if !toolrule.ValidWireName(t.WireName()) {
			return nil, fmt.Errorf("tool %s has invalid wire name %q: expected [A-Za-z0-9_.-]+", id, t.WireName())
		}
		if !isObject(t.Parameters()) {
			return nil, fmt.Errorf("tool %s parameters must be a JSON Schema object", id)
		}
		r.byID[id] = t
		r.tools = append(r.tools, t)
	}
	return r, nil
}

// isObject reports whether raw is one JSON object. It scans without
// decoding: every run builds a registry, and a debugger stepping back
// re-runs a prompt once per step.
func isObject(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// Get returns the tool with id.
func (r *Registry) Get(id toolrule.ID) (Tool, bool) {
	if r == nil {
		return nil, false
	}
	t, ok := r.byID[id]
	return t, ok
}

// Tools returns the tools in registration order (the catalog order).
func (r *Registry) Tools() []Tool {
	if r == nil {
		return nil
	}
	return append([]Tool(nil), r.tools...)
}

// Catalog returns the picker entries for every registered tool.
func (r *Registry) Catalog() []toolrule.Entry {
	var out []toolrule.Entry
	for _, t := range r.Tools() {
		out = append(out, EntryFor(t))
	}
	return out
}

// EntryFor builds the picker entry of a tool: its id, name, description
// and sorted top-level parameter names (the enriched text of
// docs/language.md#capability-resolution).
func EntryFor(t Tool) toolrule.Entry {
	return toolrule.Entry{ID: t.ID(), Name: t.ID().Name, Description: t.Description(), Params: toolrule.ParamNames(t.Parameters())}
}
