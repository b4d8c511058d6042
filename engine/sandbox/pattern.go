package sandbox

// A Lua 5.1 pattern matcher whose every step is charged to the VM's
// instruction budget. gopher-lua's matcher cannot be interrupted: a
// pattern such as ".-.-.-.-.-.-b" on a few thousand bytes backtracks for
// minutes, out of reach of the budget and of cancellation.
//
// The algorithm is the classic backtracking one of the reference
// implementation: match walks the pattern, recursing for optional items,
// repetitions and captures. Recursion depth is bounded by the pattern
// (maxMatchDepth), the work by the budget.

const (
	maxCaptures = 32
	// maxMatchDepth bounds the matcher's recursion, as Lua 5.2+ does.
	maxMatchDepth = 200
	capUnfinished = -1
	capPosition   = -2
	// chargeEvery is how many matcher steps are charged at once.
	chargeEvery = 1024
)

// patternError is a malformed pattern; the library function raises it.
type patternError string

type capture struct{ init, len int }

type matcher struct {
	src, pat string
	level    int
	depth    int
	capture  [maxCaptures]capture
	// steps not yet charged; charge is called every chargeEvery steps.
	steps  int64
	charge func(n int64)
}

func (m *matcher) fail(msg string) { panic(patternError(msg)) }

func (m *matcher) tick() {
	m.steps++
	if m.steps >= chargeEvery {
		n := m.steps
		m.steps = 0
		m.charge(n)
	}
}

// flush charges the remaining steps.
func (m *matcher) flush() {
	if m.steps > 0 {
		n := m.steps
		m.steps = 0
		m.charge(n)
	}
}

// reset prepares a match attempt at a new start position.
func (m *matcher) reset() {
	m.level = 0
	m.depth = 0
}

func isAlpha(c byte) bool  { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isSpace(c byte) bool  { return c == ' ' || c >= '\t' && c <= '\r' }
func isCntrl(c byte) bool  { return c < 0x20 || c == 0x7f }
func isPunct(c byte) bool  { return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c) }
func isXDigit(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

// matchClass reports whether c is in the class %cl.
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = isCntrl(c)
	case 'd':
		res = isDigit(c)
	case 'l':
		res = isLower(c)
	case 'p':
		res = isPunct(c)
	case 's':
		res = isSpace(c)
	case 'u':
		res = isUpper(c)
	case 'w':
		res = isAlpha(c) || isDigit(c)
	case 'x':
		res = isXDigit(c)
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if isUpper(cl) {
		return !res
	}
	return res
}

// classEnd returns the index just past the single-character class at p.
func (m *matcher) classEnd(p int) int {
	pat := m.pat
	c := pat[p]
	p++
	switch c {
	case '%':
		if p >= len(pat) {
			m.fail("malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		// The first character is part of the set even when it is ']'.
		for {
			if p >= len(pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := pat[p]
			p++
			if c == '%' {
				if p >= len(pat) {
					m.fail("malformed pattern (missing ']')")
				}
				p++
			}
			if p >= len(pat) {
				m.fail("malformed pattern (missing ']')")
			}
			if pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

// matchBracket reports whether c is in the set pat[p:ec+1] ('[' at p,
// ']' at ec).
func (m *matcher) matchBracket(c byte, p, ec int) bool {
	pat := m.pat
	sig := true
	p++
	if pat[p] == '^' {
		sig = false
		p++
	}
	for ; p < ec; p++ {
		switch {
		case pat[p] == '%':
			p++
			if matchClass(c, pat[p]) {
				return sig
			}
		case p+2 < ec && pat[p+1] == '-':
			if pat[p] <= c && c <= pat[p+2] {
				return sig
			}
			p += 2
		case pat[p] == c:
			return sig
		}
	}
	return !sig
}

// singleMatch reports whether src[s] matches the class pat[p:ep].
func (m *matcher) singleMatch(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchBracket(c, p, ep-1)
	}
	return m.pat[p] == c
}

// match matches pat[p:] at src[s:] and returns the end of the match, or -1.
func (m *matcher) match(s, p int) int {
	m.depth++
	if m.depth > maxMatchDepth {
		m.fail("pattern too complex")
	}
	defer func() { m.depth-- }()
	pat := m.pat
	for {
		m.tick()
		if p >= len(pat) {
			return s
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 < len(pat) {
				switch c := pat[p+1]; {
				case c == 'b':
					s = m.matchBalance(s, p+2)
					if s == -1 {
						return -1
					}
					p += 4
					continue
				case c == 'f':
					p += 2
					if p >= len(pat) || pat[p] != '[' {
						m.fail("missing '[' after '%f' in pattern")
					}
					ep := m.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = m.src[s-1]
					}
					if s < len(m.src) {
						cur = m.src[s]
					}
					if m.matchBracket(prev, p, ep-1) || !m.matchBracket(cur, p, ep-1) {
						return -1
					}
					p = ep
					continue
				case isDigit(c):
					s = m.matchCapture(s, c)
					if s == -1 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		// A single-character class, possibly followed by a quantifier.
		ep := m.classEnd(p)
		ok := m.singleMatch(s, p, ep)
		if ep < len(pat) {
			switch pat[ep] {
			case '?':
				if ok {
					if r := m.match(s+1, ep+1); r != -1 {
						return r
					}
				}
				p = ep + 1
				continue
			case '*':
				return m.maxExpand(s, p, ep)
			case '+':
				if !ok {
					return -1
				}
				return m.maxExpand(s+1, p, ep)
			case '-':
				return m.minExpand(s, p, ep)
			}
		}
		if !ok {
			return -1
		}
		s++
		p = ep
	}
}

func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.singleMatch(s+i, p, ep) {
		m.tick()
		i++
	}
	for ; i >= 0; i-- {
		if r := m.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if r := m.match(s, ep+1); r != -1 {
			return r
		}
		if !m.singleMatch(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		m.fail("too many captures")
	}
	m.capture[m.level] = capture{init: s, len: what}
	m.level++
	r := m.match(s, p)
	if r == -1 {
		m.level--
	}
	return r
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.fail("invalid pattern capture")
	}
	m.capture[l].len = s - m.capture[l].init
	r := m.match(s, p)
	if r == -1 {
		m.capture[l].len = capUnfinished
	}
	return r
}

func (m *matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("malformed pattern (missing arguments to '%b')")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, close := m.pat[p], m.pat[p+1]
	depth := 1
	for i := s + 1; i < len(m.src); i++ {
		m.tick()
		switch m.src[i] {
		case close:
			depth--
			if depth == 0 {
				return i + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

func (m *matcher) matchCapture(s int, c byte) int {
	l := int(c - '1')
	if l < 0 || l >= m.level || m.capture[l].len == capUnfinished {
		m.fail("invalid capture index")
	}
	cp := m.capture[l]
	if cp.len < 0 || len(m.src)-s < cp.len {
		return -1
	}
	m.steps += int64(cp.len >> 6)
	if m.src[cp.init:cp.init+cp.len] == m.src[s:s+cp.len] {
		return s + cp.len
	}
	return -1
}

// captureValue is capture i of a match spanning src[s:e]: a string, or a
// position (1-based) for a position capture. With no captures, capture 0
// is the whole match.
func (m *matcher) captureValue(i, s, e int) (str string, pos int, isPos bool) {
	if i >= m.level {
		if i != 0 {
			m.fail("invalid capture index")
		}
		return m.src[s:e], 0, false
	}
	c := m.capture[i]
	switch c.len {
	case capUnfinished:
		m.fail("unfinished capture")
	case capPosition:
		return "", c.init + 1, true
	}
	return m.src[c.init : c.init+c.len], 0, false
}

// specials are the characters that make a pattern more than plain text.
const specials = "^$*+?.([%-"
