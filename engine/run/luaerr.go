package run

import (
	"errors"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	lua "github.com/yuin/gopher-lua"
)

// mapLuaError turns a failed chunk into a run error (runtime.md §3.6):
// cancellation first, then a tripped quota (typed, never by message
// text), then a typed error raised by a host function that nothing caught
// (decisions.md keeps its kind), else kind Lua with the chunk's lines
// mapped to prompt file lines.
func (vm *VM) mapLuaError(err error, c *parse.Chunk) *RunError {
	if vm.sb.Cancelled() || vm.ctx.Err() != nil {
		return errCancelled(err)
	}
	if q := vm.sb.Quota(); q != nil {
		return &RunError{Kind: KindQuota, Variant: "LuaQuota", Msg: q.Error(), Cause: q, Line: vm.errLine(err, c)}
	}
	msg := err.Error()
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		if ae.Object != nil {
			if s, ok := ae.Object.(lua.LString); ok {
				msg = string(s)
			} else {
				msg = "(error object is a " + typeName(ae.Object) + " value)"
			}
		}
	}
	for hm, re := range vm.hostErrs {
		if re.Kind != KindLua && strings.HasSuffix(msg, hm) {
			out := *re
			out.Line = vm.errLine(err, c)
			return &out
		}
	}
	if c == nil {
		return &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: msg, Cause: err}
	}
	mapped, line := mapLines(msg, c)
	return &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: mapped, Line: line, Cause: err}
}

// errLine finds the chunk line of err, or 0.
func (vm *VM) errLine(err error, c *parse.Chunk) int {
	if c == nil {
		return 0
	}
	_, line := mapLines(err.Error(), c)
	return line
}

// mapLines rewrites each "<label>:<n>:" of chunk c to the file line
// FirstLine+n-1 and makes sure the message starts with "<label>:<line>: ".
// Other chunks' markers (errors bubbling up from arms) are left alone.
func mapLines(msg string, c *parse.Chunk) (string, int) {
	marker := c.Label + ":"
	var sb strings.Builder
	first := 0
	rest := msg
	for {
		i := strings.Index(rest, marker)
		if i < 0 {
			sb.WriteString(rest)
			break
		}
		j := i + len(marker)
		k := j
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k == j || k >= len(rest) || rest[k] != ':' {
			sb.WriteString(rest[:j])
			rest = rest[j:]
			continue
		}
		n, _ := strconv.Atoi(rest[j:k])
		abs := c.FirstLine + n - 1
		if first == 0 {
			first = abs
		}
		sb.WriteString(rest[:j])
		sb.WriteString(strconv.Itoa(abs))
		rest = rest[k:]
	}
	out := sb.String()
	if first == 0 {
		return out, 0
	}
	prefix := c.Label + ":" + strconv.Itoa(first) + ": "
	if !strings.HasPrefix(out, prefix) {
		out = prefix + out
	}
	return out, first
}

// chunkErr is a host-contract failure attributed to chunk c.
func (vm *VM) chunkErr(c *parse.Chunk, msg string) *RunError {
	return &RunError{Kind: KindLua, Msg: msg, Line: c.FirstLine}
}
