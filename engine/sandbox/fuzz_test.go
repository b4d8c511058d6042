package sandbox

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// gen writes random Lua from the grammar, driven by the fuzzer's bytes:
// loops (often endless), recursion, pcall, and above all the string and
// table libraries with random patterns, sizes and repetitions.
type gen struct {
	data  []byte
	pos   int
	sb    strings.Builder
	depth int
	vars  int
}

func (g *gen) byte() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

func (g *gen) pick(n int) int { return int(g.byte()) % n }

func (g *gen) w(s string) { g.sb.WriteString(s) }

func (g *gen) name() string {
	if g.vars == 0 {
		return "v0"
	}
	return fmt.Sprintf("v%d", g.pick(g.vars))
}

var patternAtoms = []string{".", "%a", "%d", "%s", "%w", "%p", "[a-c]", "[^x]", "[%w_]", "a", "b", "x", "(", ")", "()", "%b()", "%f[%w]", "*", "+", "-", "?", "^", "$", "%1", "%", "[", ".-", ".*", "a*", "(.-)"}

func (g *gen) pattern() string {
	var b strings.Builder
	n := 1 + g.pick(8)
	for i := 0; i < n; i++ {
		b.WriteString(patternAtoms[g.pick(len(patternAtoms))])
	}
	return fmt.Sprintf("%q", b.String())
}

func (g *gen) number() string {
	switch g.pick(6) {
	case 0:
		return "0"
	case 1:
		return "-1"
	case 2:
		return fmt.Sprint(g.pick(20))
	case 3:
		return fmt.Sprint(g.pick(256) * 1000)
	case 4:
		return "1e6"
	}
	return "1e9"
}

// str is a string-valued expression.
func (g *gen) str() string {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 4 {
		return fmt.Sprintf("%q", strings.Repeat("ab(c)", g.pick(4)))
	}
	switch g.pick(12) {
	case 0:
		return "string.rep(" + g.str() + ", " + g.number() + ")"
	case 1:
		return "(" + g.str() + " .. " + g.str() + ")"
	case 2:
		return "(" + g.str() + "):gsub(" + g.pattern() + ", " + []string{`"%0%0"`, `"x"`, `function(c) return c end`, `{a = "z"}`, `"%1"`}[g.pick(5)] + ")"
	case 3:
		return "tostring((" + g.str() + "):find(" + g.pattern() + ", " + g.number() + "))"
	case 4:
		return "tostring((" + g.str() + "):match(" + g.pattern() + "))"
	case 5:
		return "string.format(" + []string{`"%s%s"`, `"%5d|%q"`, `"%-20s%x"`, `"%.3f%c"`, `"%99s%s"`}[g.pick(5)] + ", " + g.str() + ", " + g.number() + ")"
	case 6:
		return "table.concat({" + g.str() + ", " + g.str() + "}, " + g.str() + ")"
	case 7:
		return "(" + g.str() + "):upper()"
	case 8:
		return "(" + g.str() + "):sub(" + g.number() + ", " + g.number() + ")"
	case 9:
		return g.name()
	case 10:
		return "string.char(string.byte(" + g.str() + ", 1, " + g.number() + "))"
	}
	return fmt.Sprintf("%q", strings.Repeat("ab(c) ", g.pick(6)))
}

func (g *gen) block(n int) {
	for i := 0; i < n && g.pos < len(g.data); i++ {
		g.stmt()
	}
}

func (g *gen) stmt() {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 6 {
		g.w("do end\n")
		return
	}
	switch g.pick(11) {
	case 0, 1, 2:
		g.w(fmt.Sprintf("local v%d = %s\n", g.vars, g.str()))
		g.vars++
	case 3:
		g.w("while true do\n")
		g.block(1 + g.pick(3))
		g.w("end\n")
	case 4:
		g.w("for i = 1, " + g.number() + " do\n")
		g.block(1 + g.pick(3))
		g.w("end\n")
	case 5:
		g.w("for m in (" + g.str() + "):gmatch(" + g.pattern() + ") do\n")
		g.block(1 + g.pick(2))
		g.w("end\n")
	case 6:
		g.w("pcall(function()\n")
		g.block(1 + g.pick(3))
		g.w("end)\n")
	case 7:
		g.w("local function f(n) if n > " + g.number() + " then return n end return " + []string{"f(n + 1)", "1 + f(n + 1)", "(pcall(f, n + 1))", "select('#', unpack({}, 1, n))"}[g.pick(4)] + " end\npcall(f, 1)\n")
	case 8:
		g.w("local t = {} for i = 1, " + g.number() + " do table.insert(t, " + []string{"1, ", ""}[g.pick(2)] + g.str() + ") end table.sort(t) t = table.concat(t, " + g.str() + ")\n")
	case 9:
		g.w("pcall(unpack, {}, 1, " + g.number() + ")\n")
	default:
		g.w("if #" + g.str() + " > " + g.number() + " then\n")
		g.block(1 + g.pick(2))
		g.w("else\n")
		g.block(1)
		g.w("end\n")
	}
}

// Fuzz budgets: small, so that each input is quick.
const (
	fuzzInstructions = 200_000
	fuzzHeap         = 32 << 20
	fuzzMaxString    = 1 << 20
	fuzzDeadline     = 10 * time.Second
	fuzzCPU          = 5 * time.Second
)

// FuzzBudgets runs random Lua under the budgets and checks that none is
// exceeded: the VM stops at its instruction budget (give or take the last
// charge), the heap stays near its limit, and no input runs into the
// CPU or wall-clock limit, which only work the instruction budget does not
// count reaches.
//
//	go test ./engine/sandbox -run '^$' -fuzz FuzzBudgets -fuzztime 10m -parallel 1
func FuzzBudgets(f *testing.F) {
	for _, seed := range []string{"", "\x00\x01\x02", "\x03\x05\x02\x02\x09", "\x05\x03\x02\x00\x07\x01", "\x08\x03\x00\x02\x04", "\x07\x02\x03\x00\x01\x02\x03"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		g.block(1 + g.pick(6))
		src := g.sb.String()

		b := NewBudget(Limits{Instructions: fuzzInstructions, RunInstructions: 3 * fuzzInstructions, HeapBytes: fuzzHeap, MaxString: fuzzMaxString, Timeout: fuzzDeadline, CPU: fuzzCPU})
		defer b.Stop()
		s := New(b.Bind(context.Background()), Options{Budget: b})
		defer s.Close()
		fn, err := s.Load(src, "fuzz")
		if err != nil {
			t.Fatalf("generated Lua does not compile: %v\n%s", err, src)
		}
		var peak atomic.Int64
		base := HeapBytes()
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
					if h := HeapBytes() - base; h > peak.Load() {
						peak.Store(h)
					}
				}
			}
		}()
		s.L.Push(fn)
		close(stop)

		if q := s.Quota(); q != nil && (q.Resource == ResTime || q.Resource == ResCPU) {
			t.Fatalf("%v: some work escaped the instruction budget\n%s", q, src)
		}
		if n, most := s.Instructions(), s.ctx.largest; n > fuzzInstructions+HookEvery+most {
			t.Fatalf("ran %d instructions, budget %d (largest charge %d)\n%s", n, fuzzInstructions, most, src)
		}
		// Garbage counts in the samples until it is collected, hence the
		// margin over the limit.
		if p := peak.Load(); p > 4*fuzzHeap {
			t.Fatalf("heap grew by %d MiB, limit %d MiB\n%s", p>>20, fuzzHeap>>20, src)
		}
	})
}
