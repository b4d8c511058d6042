package flow

import (
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// VarSetInUnit reports whether the shared library or a chunk of section
// s before the given block may write var.key (or uses var as a whole):
// then VarMaySet and VarSetFirst are both true there, whatever the walk
// before the section does. It answers from the unit's own chunks, so a
// caller that asks it first computes the walk's var flow (the keys that
// may be set on entry to every section, a pass over the whole prompt)
// only for the reads it cannot settle this way: a placeholder of a key
// the section's own code set before it, the usual case, needs none. A
// false answer says nothing (ask VarMaySet).
func (r *Result) VarSetInUnit(s *parse.Section, block int, key string) bool {
	u := r.Prog.UnitOf[s]
	if u == nil {
		return false
	}
	w := r.writes.Load()
	if w == nil {
		if r.writesFrom != nil {
			w = r.writesFrom.splice(r.Prog, int(r.writesLo), int(r.writesHi))
		} else {
			w = varWritesOf(r.Prog)
		}
		r.writes.Store(w)
	}
	for _, c := range u.Chunks {
		if c.Kind != program.SharedChunk && c.Block >= block {
			continue
		}
		if len(c.AST) > 0 && r.Prog.Facts(c).VarWhole {
			return true
		}
		if i := c.Index(); i < len(w.at)-1 {
			for _, k := range w.keys[w.at[i]:w.at[i+1]] {
				if k == key {
					return true
				}
			}
		}
	}
	return false
}

// varWrites is the var keys each chunk of a program writes, as the var
// flow counts them (computeVarFlow): those of chunk i are
// keys[at[i]:at[i+1]], in source order, repeated when written twice.
type varWrites struct {
	once sync.Once
	at   []int32
	keys []string
}

type varWritesKey struct{ prog *program.Program }

// splice returns the var writes of prog, built from w, those of a
// build whose chunks prog's pair with, save prog's chunks [lo, hi),
// which replaced as many (program.EditedFrom): the paired chunks' keys
// are w's, the replaced chunks' are read from their accesses.
func (w *varWrites) splice(prog *program.Program, lo, hi int) *varWrites {
	n := len(prog.Chunks)
	if len(w.at) != n+1 || lo < 0 || lo > hi || hi > n {
		return varWritesOf(prog)
	}
	if lo == hi {
		return w // no chunk replaced: the same writes (read only)
	}
	out := &varWrites{at: make([]int32, n+1)}
	out.keys = make([]string, 0, len(w.keys)+4)
	out.keys = append(out.keys, w.keys[:w.at[lo]]...)
	copy(out.at, w.at[:lo+1])
	for i := lo; i < hi; i++ {
		out.at[i] = int32(len(out.keys))
		for _, g := range prog.GlobalsIn(prog.Chunks[i]) {
			if g.Expr.Value != "var" {
				continue
			}
			if key, ok := writtenKey(g); ok {
				out.keys = append(out.keys, key)
			}
		}
	}
	d := int32(len(out.keys)) - w.at[hi]
	out.keys = append(out.keys, w.keys[w.at[hi]:]...)
	for i := hi; i <= n; i++ {
		out.at[i] = w.at[i] + d
	}
	return out
}

// writtenKey returns the top-level var key access g writes, if it
// writes one (as the var flow counts writes).
func writtenKey(g *program.Global) (string, bool) {
	rest, ok := strings.CutPrefix(g.Path, "var.")
	if !ok || !g.FieldWrite && !g.Write {
		return "", false
	}
	key, _, _ := strings.Cut(rest, ".")
	return key, true
}

// varWritesOf returns prog's var writes, made once per program (kept
// with its prompt).
func varWritesOf(prog *program.Program) *varWrites {
	key := varWritesKey{prog}
	w, ok := prog.Prompt.Memo(key).(*varWrites)
	if !ok {
		w = prog.Prompt.SetMemo(key, &varWrites{}).(*varWrites)
	}
	w.once.Do(func() {
		w.at = make([]int32, len(prog.Chunks)+1)
		w.keys = make([]string, 0, len(prog.VarGlobals))
		// VarGlobals are in chunk order (program.Program).
		next := 0
		for _, g := range prog.VarGlobals {
			key, ok := writtenKey(g)
			if !ok {
				continue
			}
			i := prog.ChunkOf(g).Index()
			for ; next <= i; next++ {
				w.at[next] = int32(len(w.keys))
			}
			w.keys = append(w.keys, key)
		}
		for ; next <= len(prog.Chunks); next++ {
			w.at[next] = int32(len(w.keys))
		}
	})
	return w
}
