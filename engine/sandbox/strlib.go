package sandbox

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/luaast"
	lua "github.com/yuin/gopher-lua"
)

// Library functions that loop or allocate in proportion to their input
// are replaced or wrapped here: each charges its work to the instruction
// budget as it goes (charge) and checks sizes before it allocates
// (grow), so that neither CPU nor memory escapes the run's budgets.

// bytesPerInstruction is how many bytes a library function may copy or
// scan for the price of one instruction.
const bytesPerInstruction = 64

// maxResults caps the values one call may return (unpack, string.byte),
// as the reference implementation's stack limit does.
const maxResults = 8000

// installLibs replaces and wraps the string and table functions.
func (s *State) installLibs() {
	L := s.L
	strT := L.GetGlobal("string").(*lua.LTable)
	set := func(t *lua.LTable, name string, fn lua.LGFunction) { t.RawSetString(name, L.NewFunction(fn)) }
	set(strT, "rep", s.strRep)
	set(strT, "format", s.strFormat)
	set(strT, "find", func(L *lua.LState) int { return s.strFind(L, true) })
	set(strT, "match", func(L *lua.LState) int { return s.strFind(L, false) })
	set(strT, "gmatch", s.strGmatch)
	set(strT, "gsub", s.strGsub)
	set(strT, "byte", s.strByte)
	L.SetGlobal(luaast.ConcatFunc, L.NewFunction(s.concat))
	L.SetGlobal("pcall", L.NewFunction(s.pcall))
	L.SetGlobal("xpcall", L.NewFunction(s.xpcall))
	for _, name := range []string{"upper", "lower", "reverse"} {
		orig := strT.RawGetString(name).(*lua.LFunction).GFunction
		set(strT, name, func(L *lua.LState) int {
			s.chargeBytes(len(L.CheckString(1)))
			return orig(L)
		})
	}
	tabT := L.GetGlobal("table").(*lua.LTable)
	set(tabT, "concat", s.tableConcat)
	unpack := L.NewFunction(s.unpack)
	L.SetGlobal("unpack", unpack)
	tabT.RawSetString("unpack", unpack)
	insert := tabT.RawGetString("insert").(*lua.LFunction).GFunction
	set(tabT, "insert", func(L *lua.LState) int {
		// Inserting shifts the elements after the position.
		s.Charge(1 + int64(L.CheckTable(1).Len()))
		return insert(L)
	})
	remove := tabT.RawGetString("remove").(*lua.LFunction).GFunction
	set(tabT, "remove", func(L *lua.LState) int {
		s.Charge(1 + int64(L.CheckTable(1).Len()))
		return remove(L)
	})
	for _, name := range []string{"getn", "maxn"} {
		if f, ok := tabT.RawGetString(name).(*lua.LFunction); ok {
			orig := f.GFunction
			set(tabT, name, func(L *lua.LState) int {
				// Both scan the array part.
				s.Charge(1 + int64(L.CheckTable(1).Len()))
				return orig(L)
			})
		}
	}
	tsort := tabT.RawGetString("sort").(*lua.LFunction).GFunction
	set(tabT, "sort", func(L *lua.LState) int {
		n := float64(L.CheckTable(1).Len())
		s.Charge(1 + int64(n*math.Log2(n+1)))
		return tsort(L)
	})
}

// chargeBytes charges scanning or copying n bytes.
func (s *State) chargeBytes(n int) { s.Charge(1 + int64(n/bytesPerInstruction)) }

// grow checks that a result of cur bytes may grow by n more: the string
// cap first, then (at each MiB boundary) the run's heap.
func (s *State) grow(what string, cur, n int) {
	total := int64(cur) + int64(n)
	if total > int64(s.opts.MaxString) {
		s.raiseMem(what, total)
	}
	if s.opts.Heap != nil && total>>20 != int64(cur)>>20 {
		if q := s.opts.Heap.Check(int64(n)); q != nil {
			s.Trip(q)
			s.L.RaiseError("%s", q.Error())
		}
	}
}

// runMatcher runs fn with a matcher, turning a malformed pattern into a
// Lua error and charging the matcher's steps.
func (s *State) runMatcher(m *matcher, fn func()) {
	m.charge = s.Charge
	defer func() {
		if r := recover(); r != nil {
			if pe, ok := r.(patternError); ok {
				s.L.RaiseError("%s", string(pe))
			}
			panic(r)
		}
	}()
	fn()
	m.flush()
}

// pushCapture pushes capture i of the match src[st:e].
func pushCapture(L *lua.LState, m *matcher, i, st, e int) {
	str, pos, isPos := m.captureValue(i, st, e)
	if isPos {
		L.Push(lua.LNumber(pos))
	} else {
		L.Push(lua.LString(str))
	}
}

// pushCaptures pushes the captures of the match src[st:e] (the whole match
// when the pattern has none and whole is set) and returns their number.
func pushCaptures(L *lua.LState, m *matcher, st, e int, whole bool) int {
	n := m.level
	if n == 0 && whole {
		n = 1
	}
	for i := 0; i < n; i++ {
		pushCapture(L, m, i, st, e)
	}
	return n
}

// strFind is string.find (find) and string.match.
func (s *State) strFind(L *lua.LState, find bool) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	// Lua 5.4's rule: a start past the end finds nothing.
	init := L.OptInt(3, 1)
	switch {
	case init == 0 || init < -len(src):
		init = 1
	case init < 0:
		init += len(src) + 1
	}
	init--
	if init > len(src) {
		L.Push(lua.LNil)
		return 1
	}
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(pat, specials)) {
		s.chargeBytes(len(src) - init)
		i := strings.Index(src[init:], pat)
		if i < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init + i + 1))
		L.Push(lua.LNumber(init + i + len(pat)))
		return 2
	}
	anchor := strings.HasPrefix(pat, "^")
	if anchor {
		pat = pat[1:]
	}
	m := &matcher{src: src, pat: pat}
	n := -1
	s.runMatcher(m, func() {
		for st := init; st <= len(src); st++ {
			m.reset()
			if e := m.match(st, 0); e != -1 {
				if find {
					L.Push(lua.LNumber(st + 1))
					L.Push(lua.LNumber(e))
					n = 2 + pushCaptures(L, m, st, e, false)
				} else {
					n = pushCaptures(L, m, st, e, true)
				}
				return
			}
			if anchor {
				return
			}
		}
	})
	if n < 0 {
		L.Push(lua.LNil)
		return 1
	}
	return n
}

// strGmatch returns an iterator that finds one match per call (gopher-lua
// collects every match up front).
func (s *State) strGmatch(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		m := &matcher{src: src, pat: pat}
		n := 0
		s.runMatcher(m, func() {
			for ; pos <= len(src); pos++ {
				m.reset()
				if e := m.match(pos, 0); e != -1 {
					st := pos
					pos = e
					if e == st {
						pos++
					}
					n = pushCaptures(L, m, st, e, true)
					return
				}
			}
		})
		return n
	}))
	return 1
}

// strGsub is a linear string.gsub: the result is built once, its size
// checked before each piece is added.
func (s *State) strGsub(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	repl := L.Get(3)
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTFunction, lua.LTTable:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	anchor := strings.HasPrefix(pat, "^")
	if anchor {
		pat = pat[1:]
	}
	m := &matcher{src: src, pat: pat}
	var b strings.Builder
	add := func(piece string) {
		if piece == "" {
			return
		}
		s.grow("string.gsub", b.Len(), len(piece))
		m.steps += int64(len(piece) / bytesPerInstruction)
		b.WriteString(piece)
	}
	n := 0
	s.runMatcher(m, func() {
		pos, last := 0, 0
		for n < maxN {
			m.reset()
			e := m.match(pos, 0)
			if e != -1 {
				n++
				add(src[last:pos])
				s.gsubValue(L, m, repl, pos, e, add)
				last = e
			}
			switch {
			case e > pos:
				pos = e
			case pos < len(src):
				pos++
			default:
				pos = len(src) + 1
			}
			if anchor || pos > len(src) {
				break
			}
		}
		add(src[last:])
	})
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// gsubValue adds the replacement of the match src[st:e].
func (s *State) gsubValue(L *lua.LState, m *matcher, repl lua.LValue, st, e int, add func(string)) {
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		rs := lua.LVAsString(r)
		for i := 0; i < len(rs); i++ {
			c := rs[i]
			if c != '%' {
				e := literalEnd(rs, i)
				add(rs[i:e])
				i = e - 1
				continue
			}
			i++
			switch {
			case i >= len(rs):
				L.RaiseError("invalid use of '%%' in replacement string")
			case rs[i] == '0':
				add(m.src[st:e])
			case isDigit(rs[i]):
				str, pos, isPos := m.captureValue(int(rs[i]-'1'), st, e)
				if isPos {
					str = strconv.Itoa(pos)
				}
				add(str)
			default:
				add(rs[i : i+1])
			}
		}
		return
	case *lua.LFunction:
		L.Push(r)
		n := pushCaptures(L, m, st, e, true)
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	case *lua.LTable:
		pushCapture(L, m, 0, st, e)
		k := L.Get(-1)
		L.Pop(1)
		v = L.GetTable(r, k)
	}
	switch v.Type() {
	case lua.LTNil:
		add(m.src[st:e])
	case lua.LTBool:
		if v == lua.LFalse {
			add(m.src[st:e])
		} else {
			L.RaiseError("invalid replacement value (a boolean)")
		}
	case lua.LTString, lua.LTNumber:
		add(lua.LVAsString(v))
	default:
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	}
}

func (s *State) strRep(L *lua.LState) int {
	str := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || str == "" {
		L.Push(lua.LString(""))
		return 1
	}
	total := int64(len(str)) * int64(n)
	if total/int64(n) != int64(len(str)) {
		total = math.MaxInt64
	}
	s.raiseMem("string.rep", total)
	s.chargeBytes(int(total))
	L.Push(lua.LString(strings.Repeat(str, n)))
	return 1
}

func (s *State) strByte(L *lua.LState) int {
	str := L.CheckString(1)
	i := L.OptInt(2, 1)
	j := L.OptInt(3, i)
	rel := func(p int) int {
		if p < 0 {
			p += len(str) + 1
		}
		return p
	}
	i, j = rel(i), rel(j)
	if i < 1 {
		i = 1
	}
	if j > len(str) {
		j = len(str)
	}
	if i > j {
		return 0
	}
	if j-i >= maxResults {
		L.RaiseError("string slice too long")
	}
	s.Charge(int64(j - i + 1))
	for k := i; k <= j; k++ {
		L.Push(lua.LNumber(str[k-1]))
	}
	return j - i + 1
}

// unpack is unpack/table.unpack with the reference implementation's cap
// on the number of results (gopher-lua pushes any number).
func (s *State) unpack(L *lua.LState) int {
	var tbl *lua.LTable
	if s.opts.TableArg != nil {
		tbl = s.opts.TableArg(L, 1)
	} else {
		tbl = L.CheckTable(1)
	}
	i := L.OptInt(2, 1)
	var j int
	if L.Get(3) == lua.LNil {
		j = tbl.Len()
	} else {
		j = L.CheckInt(3)
	}
	if i > j {
		return 0
	}
	n := int64(j) - int64(i) + 1
	if n >= maxResults {
		L.RaiseError("too many results to unpack")
	}
	s.Charge(n)
	for k := i; k <= j; k++ {
		L.Push(tbl.RawGetInt(k))
	}
	return int(n)
}

// strFormat is string.format built piece by piece: each piece's size is
// checked before it is added, and widths and precisions have at most two
// digits (as in Lua), so no single piece is large unless its argument is.
func (s *State) strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	var b strings.Builder
	add := func(piece string) {
		s.grow("string.format", b.Len(), len(piece))
		b.WriteString(piece)
	}
	arg := 1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			e := literalEnd(f, i)
			add(f[i:e])
			i = e - 1
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			add("%")
			continue
		}
		start := i
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		if i-start > 5 {
			L.RaiseError("invalid format (repeated flags)")
		}
		flags := f[start:i]
		width, prec := 0, -1
		digits := 0
		for i < len(f) && isDigit(f[i]) {
			width = width*10 + int(f[i]-'0')
			digits++
			i++
		}
		if i < len(f) && f[i] == '.' {
			i++
			prec = 0
			pd := 0
			for i < len(f) && isDigit(f[i]) {
				prec = prec*10 + int(f[i]-'0')
				pd++
				i++
			}
			if pd > 2 {
				digits = 3
			}
		}
		if digits > 2 {
			L.RaiseError("invalid format (width or precision too long)")
		}
		if i >= len(f) {
			L.RaiseError("invalid conversion '%%%s' to 'format'", f[start:])
		}
		conv := f[i]
		spec := "%" + f[start:i]
		arg++
		if arg > L.GetTop() {
			L.ArgError(arg, "no value")
		}
		v := L.Get(arg)
		switch conv {
		case 'd', 'i':
			add(fmt.Sprintf(spec+"d", int64(L.CheckNumber(arg))))
		case 'o', 'u', 'x', 'X':
			n := int64(L.CheckNumber(arg))
			verb := string(conv)
			if conv == 'u' {
				verb = "d"
			}
			add(fmt.Sprintf(spec+verb, uint64(n)))
		case 'c':
			c := string([]byte{byte(int64(L.CheckNumber(arg)))})
			add(fmt.Sprintf("%"+flags+widthText(width)+"s", c))
		case 'e', 'E', 'f', 'g', 'G':
			add(fmt.Sprintf(spec+string(conv), float64(L.CheckNumber(arg))))
		case 'q':
			str := L.CheckString(arg)
			s.grow("string.format", b.Len(), len(str)+2)
			add(luaQuote(str))
		case 's':
			str := L.ToStringMeta(v).String()
			if prec >= 0 && prec < len(str) {
				str = str[:prec]
			}
			if width > len(str) {
				str = fmt.Sprintf("%"+flags+widthText(width)+"s", str)
			}
			add(str)
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	s.chargeBytes(b.Len())
	L.Push(lua.LString(b.String()))
	return 1
}

func widthText(w int) string {
	if w == 0 {
		return ""
	}
	return strconv.Itoa(w)
}

// luaQuote is %q: a Lua string literal that reads back as s.
func luaQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString("\\\n")
		case '\r':
			b.WriteString("\\r")
		case 0:
			b.WriteString("\\000")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tableConcat follows docs/language.md#sandbox: userdata elements go through
// tostring, other non-string, non-number elements raise.
func (s *State) tableConcat(L *lua.LState) int {
	tbl, sep, i, j := s.concatArgs(L)
	var sb strings.Builder
	for k := i; k <= j; k++ {
		v := tbl.RawGetInt(k)
		var piece string
		switch v.Type() {
		case lua.LTString, lua.LTNumber:
			piece = lua.LVAsString(v)
		case lua.LTUserData:
			piece = L.ToStringMeta(v).String()
		default:
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", v.Type().String(), k)
		}
		n := len(piece)
		if k < j {
			n += len(sep)
		}
		s.grow("table.concat", sb.Len(), n)
		s.chargeBytes(n)
		sb.WriteString(piece)
		if k < j {
			sb.WriteString(sep)
		}
	}
	L.Push(lua.LString(sb.String()))
	return 1
}

func canConcat(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

// concat carries out `a .. b .. c` (the compiler turns each
// concatenation into a call of luaast.ConcatFunc): as the reference
// implementation, right to left, joining runs of strings and numbers at
// once and calling __concat for other pairs; each join's size is checked
// before the result is allocated and its copy is charged.
func (s *State) concat(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	rhs := L.Get(n)
	for i := n - 1; i >= 1; i-- {
		lhs := L.Get(i)
		if canConcat(lhs) && canConcat(rhs) {
			j := i
			for j > 1 && canConcat(L.Get(j-1)) {
				j--
			}
			total := 0
			parts := make([]string, 0, i-j+2)
			for k := j; k <= i; k++ {
				p := lua.LVAsString(L.Get(k))
				parts = append(parts, p)
				total += len(p)
			}
			parts = append(parts, lua.LVAsString(rhs))
			total += len(parts[len(parts)-1])
			s.grow("'..'", 0, total)
			s.chargeBytes(total)
			rhs = lua.LString(strings.Join(parts, ""))
			i = j
			continue
		}
		mm := L.GetMetaField(lhs, "__concat")
		if mm == lua.LNil {
			mm = L.GetMetaField(rhs, "__concat")
		}
		if _, ok := mm.(*lua.LFunction); !ok {
			bad := lhs
			if canConcat(lhs) {
				bad = rhs
			}
			L.RaiseError("attempt to concatenate a %s value", bad.Type().String())
		}
		L.Push(mm)
		L.Push(lhs)
		L.Push(rhs)
		L.Call(2, 1)
		rhs = L.Get(-1)
		L.Pop(1)
	}
	L.Push(rhs)
	return 1
}

// errorCost is what a caught error is charged, in instructions.
// gopher-lua formats a traceback for every error a pcall catches, walking
// the call stack once per level: at depth d that costs about d*d/2
// instructions' worth of time (a pcall recursion spent seconds there,
// outside the budget). The error's depth is at least the pcall's; a stack
// overflow is at the deepest level.
func (s *State) errorCost(err error) int64 {
	d := int64(stackDepth(s.L))
	if ae, ok := err.(*lua.ApiError); ok {
		if msg, ok := ae.Object.(lua.LString); ok && strings.Contains(string(msg), "stack overflow") {
			d = int64(s.L.Options.CallStackSize)
		}
	}
	return 100 + d*d/2
}

// stackDepth is the number of call frames, found by binary search
// (GetStack walks the frames).
func stackDepth(L *lua.LState) int {
	lo, hi := 0, 1
	for {
		if _, ok := L.GetStack(hi); !ok {
			break
		}
		lo, hi = hi, hi*2
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if _, ok := L.GetStack(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// pcall is the base pcall with the cost of a caught error charged.
func (s *State) pcall(L *lua.LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, s.ErrorHandler()); err != nil {
		s.Charge(s.errorCost(err))
		s.pushFailure(L, err)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// xpcall is the base xpcall with the cost of a caught error charged.
func (s *State) xpcall(L *lua.LState) int {
	fn := L.CheckFunction(1)
	handler := L.CheckFunction(2)
	top := L.GetTop()
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, handler); err != nil {
		s.Charge(s.errorCost(err))
		s.pushFailure(L, err)
		return 2
	}
	L.Insert(lua.LTrue, top+1)
	return L.GetTop() - top
}

// pushFailure pushes false and the caught error's value, as Options.Caught
// makes it, or raises it again when Caught says so.
func (s *State) pushFailure(L *lua.LState, err error) {
	var v lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		v = ae.Object
	}
	if s.opts.Caught != nil {
		out, rethrow := s.opts.Caught(v)
		if rethrow {
			L.Error(v, 0)
		}
		v = out
	}
	L.Push(lua.LFalse)
	L.Push(v)
}

// literalEnd is where the literal text of a format or replacement string
// s that starts at i ends: at the next '%', or at the end of s.
func literalEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '%'); j >= 0 {
		return i + j
	}
	return len(s)
}
