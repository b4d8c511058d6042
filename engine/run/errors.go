package run

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is a run error kind (docs/language.md#error-kinds).
type Kind int

// The run error kinds. Store is declared for parity with
// upstream and never produced: store failures are Lua errors.
const (
	KindInternal Kind = iota
	KindParse
	KindVersion
	KindBinding
	kindCompletion
	kindTool
	KindLua
	KindQuota
	KindSubstitution
	KindCancelled
	KindStore
)

var kindNames = [...]string{"Internal", "Parse", "Version", "Binding", "Completion", "Tool", "Lua", "Quota", "Substitution", "Cancelled", "Store"}

// String returns the upstream spelling of the kind ("Lua", "Quota", ...).
func (k Kind) String() string {
	if int(k) >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Internal"
}

// RunError is every error a run returns. Its text is the inner message; the
// cause chain is kept for errors.As.
type RunError struct {
	Kind Kind
	// Variant names upstream's error variant when it matters to callers, e.g.
	// "ToolLoopExhausted" (fanout turns it into a stub) or "LuaQuota".
	Variant string
	// Msg is the user-facing text.
	Msg string
	// Line is the 1-based prompt file line the error points at, or 0.
	Line int
	// Where names the Lua chunk Line lies in ("section `A` prologue",
	// "prompt shared library"), or "". Msg then starts with
	// "<Where>:<Line>: ", the position Lua puts in front of an error.
	Where string
	// Retryable marks transient failures (transport, malformed or oversized
	// responses, backend status >= 500).
	Retryable bool
	// Cause is the wrapped error, if any.
	Cause error
	// nested marks an error that came out of a nested chain or arm, so a
	// fanout does not mistake a nested ToolLoopExhausted for its own.
	nested bool
}

func (e *RunError) Error() string { return e.Msg }

// Text is Msg without the leading "<Where>:<Line>: " position (repeated
// when nested execute calls raised it from the same line), for callers that
// print the location themselves. A position of another line or chunk
// further in (where a nested chain failed) stays.
func (e *RunError) Text() string {
	if e.Where == "" || e.Line <= 0 {
		return e.Msg
	}
	prefix := e.Where + ":" + strconv.Itoa(e.Line) + ": "
	msg := e.Msg
	for strings.HasPrefix(msg, prefix) {
		msg = msg[len(prefix):]
	}
	if msg == "" {
		return e.Msg
	}
	return msg
}

// Located is the error as a compiler-style line for a prompt at path:
// "path:line: text (Kind error in <where>)", the location given once; with
// no line, "path: text (Kind error)".
func (e *RunError) Located(path string) string {
	kind := e.Kind.String() + " error"
	if e.Where != "" && e.Line > 0 {
		kind += " in " + e.Where
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s (%s)", path, e.Line, e.Text(), kind)
	}
	return fmt.Sprintf("%s: %s (%s)", path, e.Text(), kind)
}

// Unwrap returns the cause.
func (e *RunError) Unwrap() error { return e.Cause }

// IsCancelled reports whether the run was cancelled (upstream is_cancelled).
func (e *RunError) IsCancelled() bool { return e.Kind == KindCancelled }

// IsRetryable reports whether retrying the run may succeed (upstream
// is_retryable).
func (e *RunError) IsRetryable() bool { return e.Retryable }

// errorf builds a RunError of the given kind.
func errorf(kind Kind, format string, args ...any) *RunError {
	return &RunError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// AsRunError returns err as a *RunError, wrapping foreign errors as
// Internal so that callers always get a kind.
func AsRunError(err error) *RunError {
	if err == nil {
		return nil
	}
	var re *RunError
	if errors.As(err, &re) {
		return re
	}
	return &RunError{Kind: KindInternal, Msg: err.Error(), Cause: err}
}

// cancelledMsg is the upstream text of the Interrupted variant.
const cancelledMsg = "interrupted by Ctrl-C"

func errCancelled(cause error) *RunError {
	return &RunError{Kind: KindCancelled, Variant: "Interrupted", Msg: cancelledMsg, Cause: cause}
}
