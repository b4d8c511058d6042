package flow

import (
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
)

// chainCycles finds the jump cycles inside execute chains: an execute
// call whose target's chain, followed while every step is certain (as
// cycle follows the walk: fall through to the next sibling, or a jump
// that stays in the chain), comes back to a section it ran. The chain
// then loops until the section-entry cap whenever the call runs. Each is
// recorded as a Cycle with Via set to the execute call.
func (r *Result) chainCycles() {
	callsOf := r.callsByChunk()
	done := map[*parse.Section]bool{}
	for _, c := range r.Prog.Calls {
		if c.Path != "execute" || c.InFunc || !r.Straight(c) || len(c.Expr.Args) == 0 {
			continue
		}
		ch := r.Prog.ChunkOf(c)
		if ch.Kind != program.SectionChunk {
			continue
		}
		target, ok := "", false
		if s, lit := c.Expr.Args[0].(*ast.StringExpr); lit {
			target, ok = s.Value, true
		} else {
			target, ok = r.walkReads(ch).Arg(c.Expr, 0).StrConst()
		}
		if !ok {
			continue
		}
		start, err := parse.Resolve(r.Prog.Prompt, ch.Section, target)
		if err != nil || done[start] {
			continue
		}
		if cyc, ok := r.chainCycle(start, callsOf); ok {
			done[start] = true
			cyc.Via = c
			r.Cycles = append(r.Cycles, cyc)
		}
	}
}

// chainCycle follows the chain that starts at start, reporting the cycle
// it certainly enters, if any.
func (r *Result) chainCycle(start *parse.Section, callsOf *callIndex) (Cycle, bool) {
	p := r.Prog.Prompt
	slice := siblings(p, start)
	i, forced := r.indexOf(slice, start), true
	seen := map[*parse.Section]int{}
	var path []*parse.Section
	var jumps []*program.Call
	for steps := 0; steps < 100000; steps++ {
		for i < len(slice) && slice[i].OffWalk && !forced {
			i++
		}
		if i >= len(slice) {
			return Cycle{}, false // the chain ends
		}
		s := slice[i]
		if at, ok := seen[s]; ok {
			var closing *program.Call
			for _, j := range jumps[at:] {
				if j != nil {
					closing = j
				}
			}
			if closing == nil {
				return Cycle{}, false
			}
			return Cycle{Sections: append([]*parse.Section(nil), path[at:]...), Close: closing}, true
		}
		seen[s] = len(path)
		path = append(path, s)
		next, j, ok := r.step(s, callsOf)
		if !ok {
			return Cycle{}, false
		}
		jumps = append(jumps, j)
		if next == nil {
			i, forced = i+1, false
			continue
		}
		slice = siblings(p, next)
		i, forced = r.indexOf(slice, next), true
	}
	return Cycle{}, false
}
