package run

import (
	"errors"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	lua "github.com/yuin/gopher-lua"
)

// mapLuaError turns a failed chunk into a run error
// (docs/language.md#errors): cancellation first, then a tripped quota (typed,
// never by message text), then a typed error raised by a host function that
// nothing caught (keeps its kind), else kind Lua with the chunk's lines
// mapped to prompt file lines.
func (vm *VM) mapLuaError(err error, c *parse.Chunk) *RunError {
	// A quota of the run (its deadline, its instruction budget) also ends
	// the context; it wins over the cancellation it causes.
	if q := vm.r.budget.Quota(); q != nil {
		return &RunError{Kind: KindQuota, Variant: "LuaQuota", Msg: q.Error(), Cause: q, Line: vm.errLine(err, c)}
	}
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
	// An error from a nested execute chain or fanout arm is already in
	// file lines: only the position this VM put in front of it is
	// converted, or each level would convert the inner lines again.
	nested := ""
	for hm, re := range vm.hostErrs {
		if re.nested && len(hm) > len(nested) && strings.HasSuffix(msg, hm) {
			nested = hm
		}
	}
	msg = msg[:len(msg)-len(nested)]
	if c == nil || !strings.Contains(msg, c.Name+":") {
		// A function defined in another chunk (a local-tool handler, a
		// helper from the prologue or the shared library) raised it.
		if oc := vm.chunkFor(msg); oc != nil {
			c = oc
		}
	}
	if c == nil {
		return &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: msg + nested, Cause: err}
	}
	mapped, line := mapLines(msg, c)
	re := &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: mapped + nested, Line: line, Cause: err}
	if line > 0 {
		re.Where = c.Name
	}
	return re
}

// chunkFor finds the chunk of this VM whose "<label>:<n>:" marker occurs
// first in msg. Chunk names are unique within a VM (parse gives repeated
// middle labels a " #k" suffix); the running chunk wins, then file order.
func (vm *VM) chunkFor(msg string) *parse.Chunk {
	best, bestAt := (*parse.Chunk)(nil), len(msg)+1
	for _, c := range vm.chunks() {
		if at := markerAt(msg, c.Name); at >= 0 && at < bestAt {
			best, bestAt = c, at
		}
	}
	return best
}

// chunks lists the chunks whose code can run in this VM: the running
// chunk first, then the VM's own blocks in file order, then the shared
// library.
func (vm *VM) chunks() []*parse.Chunk {
	var cands []*parse.Chunk
	if vm.chunk != nil {
		cands = append(cands, vm.chunk)
	}
	blocks := vm.r.p.H1Blocks
	if vm.Section != nil {
		blocks = vm.Section.Blocks
	}
	for _, b := range blocks {
		if b.Kind == parse.LuaBlock {
			cands = append(cands, b.Chunk)
		}
	}
	if vm.r.p.Shared != nil {
		cands = append(cands, vm.r.p.Shared)
	}
	return cands
}

// chunkNamed is the chunk of this VM that gopher-lua knows by name (a
// call frame's source), nil for none.
func (vm *VM) chunkNamed(name string) *parse.Chunk {
	for _, c := range vm.chunks() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// markerAt is the offset of the first "<label>:<digits>:" in msg, or -1.
func markerAt(msg, label string) int {
	off := 0
	for {
		i := strings.Index(msg[off:], label+":")
		if i < 0 {
			return -1
		}
		j := off + i + len(label) + 1
		k := j
		for k < len(msg) && msg[k] >= '0' && msg[k] <= '9' {
			k++
		}
		if k > j && k < len(msg) && msg[k] == ':' {
			return off + i
		}
		off = j
	}
}

// errLine finds the chunk line of err, or 0.
func (vm *VM) errLine(err error, c *parse.Chunk) int {
	if c == nil || !strings.Contains(err.Error(), c.Name+":") {
		c = vm.chunkFor(err.Error())
	}
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
	marker := c.Name + ":"
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
	prefix := c.Name + ":" + strconv.Itoa(first) + ": "
	if !strings.HasPrefix(out, prefix) {
		out = prefix + out
	}
	return out, first
}

// atCaller sets err.Line, when unset, to the prompt file line of the Lua
// code calling the running host function, so that an error the run
// returns without going through Lua's message (a typed binding error wins
// even when Lua caught it) still says where it comes from.
func (vm *VM) atCaller(err *RunError) {
	if err.Line > 0 {
		return
	}
	// The nearest Lua caller: a Go function between (pcall(tools.bind,
	// ...)) has no position.
	for level := 1; level <= 8; level++ {
		pos := vm.L.Where(level) // "<chunk label>:<line>:", "[G]:" for Go, "" past the stack
		if pos == "" {
			return
		}
		if strings.HasPrefix(pos, "[G]") {
			continue
		}
		if c := vm.chunkFor(pos); c != nil {
			if _, line := mapLines(pos+" ", c); line > 0 {
				err.Line = line
			}
		}
		return
	}
}

// chunkErr is a host-contract failure attributed to chunk c, named and
// positioned as a Lua error of the chunk is.
func (vm *VM) chunkErr(c *parse.Chunk, msg string) *RunError {
	return &RunError{Kind: KindLua, Msg: c.Name + ":" + strconv.Itoa(c.FirstLine) + ": " + msg, Line: c.FirstLine, Where: c.Name}
}
