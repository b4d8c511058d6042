package run

import (
	"errors"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/rules"
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
			// A nested chain or arm already says where it failed.
			if !re.nested || re.Line <= 0 {
				out.Line = vm.errLine(err, c)
			}
			return &out
		}
	}
	// An error from a nested execute chain or fanout arm, or a caught
	// message raised again, is already in file lines: only the position
	// this VM put in front of it is converted, or each level would
	// convert the inner lines again.
	msg, nested := vm.splitMapped(msg)
	if inner := vm.hostErrs[nested]; inner != nil && inner.nested && inner.Line > 0 && vm.onlyPosition(msg) {
		// An uncaught failure inside an execute chain or fanout arm is
		// reported where it happened, the location given once
		// (docs/language.md#errors), not at the call that ran the chain.
		out := *inner
		return &out
	}
	if msg == "" {
		if c := vm.chunkFor(nested); c != nil {
			if line := lineAt(nested, c.Name); line > 0 {
				return &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: nested, Line: line, Where: c.Name, Cause: err}
			}
		}
	}
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
	mapped, line := mapLines(vm.rewordMessage(msg, c), c)
	re := &RunError{Kind: KindLua, Variant: "LuaRuntime", Msg: mapped + nested, Line: line, Cause: err}
	if line > 0 {
		re.Where = c.Name
	}
	return re
}

// chunks are the chunks whose code can run in this VM: the running one,
// the section's (or the H1's) and the shared library.
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
		if b.Kind == parse.LuaBlock && b.Chunk != vm.chunk {
			cands = append(cands, b.Chunk)
		}
	}
	if vm.r.p.Shared != nil && vm.r.p.Shared != vm.chunk {
		cands = append(cands, vm.r.p.Shared)
	}
	return cands
}

// onlyPosition says whether msg is empty or only the "<label>:<n>: "
// position Lua puts in front of an error, for a chunk of this VM.
func (vm *VM) onlyPosition(msg string) bool {
	if msg == "" {
		return true
	}
	c := vm.chunkFor(msg)
	if c == nil || !strings.HasPrefix(msg, c.Name+":") || !strings.HasSuffix(msg, ": ") {
		return false
	}
	n := strings.TrimSuffix(strings.TrimPrefix(msg, c.Name+":"), ": ")
	_, err := strconv.Atoi(n)
	return err == nil
}

// lineAt is the number of the first "<label>:<n>:" in msg, or 0.
func lineAt(msg, label string) int {
	at := markerAt(msg, label)
	if at < 0 {
		return 0
	}
	rest := msg[at+len(label)+1:]
	n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ':')])
	return n
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
	out, first := relabel(msg, c)
	if first == 0 {
		return out, 0
	}
	prefix := c.Name + ":" + strconv.Itoa(first) + ": "
	if !strings.HasPrefix(out, prefix) {
		out = prefix + out
	}
	return out, first
}

// relabel rewrites each "<label>:<n>:" of chunk c to the file line
// FirstLine+n-1 and returns the first file line it wrote, or 0.
func relabel(msg string, c *parse.Chunk) (string, int) {
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
	return sb.String(), first
}

// maxFileLined is how many caught messages a VM remembers as already in
// file lines.
const maxFileLined = 32

// caught is what Lua code gets for an error that pcall or xpcall caught:
// a jump unwinds on (docs/language.md#jump: it ends the chunk even inside
// pcall), and a message gets the file lines an uncaught error would show
// (docs/language.md#line-numbers). The VM remembers the messages it
// rewrote, so that one raised again is not rewritten twice.
func (vm *VM) caught(v lua.LValue) (lua.LValue, bool) {
	if vm.jumpTarget != nil {
		return v, true
	}
	s, ok := v.(lua.LString)
	if !ok {
		return v, false
	}
	msg, done := vm.splitMapped(string(s))
	msg = vm.rewordMessage(msg, vm.chunkFor(msg))
	for _, c := range vm.chunks() {
		msg, _ = relabel(msg, c)
	}
	out := msg + done
	if len(vm.fileLined) == maxFileLined {
		vm.fileLined = vm.fileLined[1:]
	}
	vm.fileLined = append(vm.fileLined, out)
	return lua.LString(out), false
}

// splitMapped splits msg into the part still in chunk lines and the
// longest tail already in file lines: an error from a nested chain or
// arm, or a message a pcall here gave file lines.
func (vm *VM) splitMapped(msg string) (head, tail string) {
	for hm, re := range vm.hostErrs {
		if re.nested && len(hm) > len(tail) && strings.HasSuffix(msg, hm) {
			tail = hm
		}
	}
	for _, m := range vm.fileLined {
		if len(m) > len(tail) && strings.HasSuffix(msg, m) {
			tail = m
		}
	}
	return msg[:len(msg)-len(tail)], tail
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

// chunkErr is a host-contract failure attributed to chunk c at file line
// line (the chunk's first line when 0), named by its label like a Lua
// error.
func (vm *VM) chunkErr(c *parse.Chunk, line int, msg string) *RunError {
	if line <= 0 {
		line = c.FirstLine
	}
	return &RunError{Kind: KindLua, Msg: c.Name + ":" + strconv.Itoa(line) + ": " + msg, Line: line, Where: c.Name}
}

// returnErr is a chunk's return value that is not a scalar
// (docs/language.md#return-values), at the chunk's return statement.
func (vm *VM) returnErr(c *parse.Chunk, err error) *RunError {
	msg := err.Error()
	if c == vm.r.p.Shared {
		// The shared library's own way out replaces the chunk's.
		var re *rules.ResultError
		if errors.As(err, &re) {
			msg = re.What()
		}
		msg += ": the shared library must not return a table (such as `return M`); define globals instead (docs/language.md#shared-library)"
	}
	return vm.chunkErr(c, returnLine(c), msg)
}
