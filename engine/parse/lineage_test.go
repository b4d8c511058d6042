package parse

import (
	"strings"
	"testing"
)

// TestLineageSame: versions parsed one after another share a lineage,
// and Same composes what each edit left alone: the common prefix is the
// smallest Before on the way, the common suffix the smallest After. A
// parse without a Change, a branch, or a version too far back tells
// nothing.
func TestLineageSame(t *testing.T) {
	text := strings.Repeat("# T\n\nSome prose.\n\n", 20)
	p0 := Parse("a.md", []byte(text))
	l, v0 := p0.Lineage()
	if l == nil || v0 != 0 {
		t.Fatalf("first parse: lineage %v version %d", l, v0)
	}
	// v1: one byte inserted at 100; v2: one byte replaced at 50.
	t1 := text[:100] + "x" + text[100:]
	p1 := ParseEdited(p0.Reuse(), Change{Before: 100, After: len(text) - 100}, "a.md", []byte(t1))
	t2 := t1[:50] + "y" + t1[51:]
	p2 := ParseEdited(p1.Reuse(), Change{Before: 50, After: len(t1) - 51}, "a.md", []byte(t2))
	l2, v2 := p2.Lineage()
	if l2 != l || v2 != 2 {
		t.Fatalf("second edit: lineage %p (want %p) version %d", l2, l, v2)
	}
	before, after, ok := l.Same(v0, v2)
	if !ok || before != 50 || after != len(text)-100 {
		t.Errorf("Same(0, 2) = %d, %d, %v; want 50, %d, true", before, after, ok, len(text)-100)
	}
	if t2[:before] != text[:before] || t2[len(t2)-after:] != text[len(text)-after:] {
		t.Errorf("Same(0, 2) claims bytes that differ")
	}
	if _, _, ok := l.Same(v2, v0); ok {
		t.Errorf("Same(2, 0) answered: version 0 does not descend from 2")
	}
	// A branch from v1 does not descend from v2.
	p3 := ParseAfter(p1.Reuse(), "a.md", []byte(t1))
	_, v3 := p3.Lineage()
	if _, _, ok := l.Same(v2, v3); ok {
		t.Errorf("Same(2, 3) answered for a branch")
	}
	if b, a, ok := l.Same(v1Of(p1), v3); !ok || b != 0 || a != 0 {
		t.Errorf("ParseAfter: Same = %d, %d, %v; want 0, 0, true (nothing known)", b, a, ok)
	}
	// Too many versions apart.
	p := p2
	for range lineageLog + 1 {
		p = ParseEdited(p.Reuse(), Change{Before: len(t2), After: len(t2)}, "a.md", []byte(t2))
	}
	_, vn := p.Lineage()
	if _, _, ok := l.Same(v2, vn); ok {
		t.Errorf("Same answered across %d versions", vn-v2)
	}
	// A fresh parse starts another lineage.
	if lf, _ := Parse("a.md", []byte(text)).Lineage(); lf == l {
		t.Errorf("a parse without Reuse joined a lineage")
	}
}

func v1Of(p *Prompt) uint64 { _, v := p.Lineage(); return v }
