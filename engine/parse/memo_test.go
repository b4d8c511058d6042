package parse

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

type memoKeyA struct{}
type memoKeyB struct{}

// TestChunkMemo: a value stored on one parse's chunk is seen by a later
// parse of the same chunk text, under its own key only; storing again
// replaces it; concurrent readers and writers are safe (run with -race).
func TestChunkMemo(t *testing.T) {
	src := []byte("# P\n\n## A\n\n```lua\nlocal memo_test_x = 1\n```\n")
	chunk := func() *Chunk {
		p := Parse("memo.md", src)
		return p.Sections[0].Blocks[0].Chunk
	}
	c := chunk()
	if c.Memo(memoKeyA{}) != nil {
		t.Fatal("fresh chunk has a memo")
	}
	c.SetMemo(memoKeyA{}, "a1")
	c.SetMemo(memoKeyB{}, "b1")
	d := chunk()
	if got := d.Memo(memoKeyA{}); got != "a1" {
		t.Fatalf("Memo(A) on a re-parse = %v, want a1", got)
	}
	d.SetMemo(memoKeyA{}, "a2")
	if got, gotB := c.Memo(memoKeyA{}), c.Memo(memoKeyB{}); got != "a2" || gotB != "b1" {
		t.Fatalf("after replacing A: A=%v B=%v, want a2 b1", got, gotB)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				if i%2 == 0 {
					c.SetMemo(memoKeyA{}, j)
				} else if v := c.Memo(memoKeyB{}); v != "b1" {
					t.Errorf("B changed to %v", v)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestMemoTableGrows: more keys than a block holds, replacements among
// them and readers running while the table grows all see every key's
// latest value (run with -race).
func TestMemoTableGrows(t *testing.T) {
	var m memoTable
	const keys = 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for k := range keys {
					if v := m.load(k); v != nil && v.(int)%1000 != k {
						t.Errorf("key %d holds %v", k, v)
						return
					}
				}
			}
		}()
	}
	for round := range 3 {
		for k := range keys {
			m.store(k, round*1000+k)
		}
	}
	close(stop)
	wg.Wait()
	for k := range keys {
		if v := m.load(k); v != 2000+k {
			t.Fatalf("key %d holds %v, want %d", k, v, 2000+k)
		}
	}
	if v := m.load(keys); v != nil {
		t.Fatalf("a key never stored holds %v", v)
	}
}

// TestMemoTableKeys: keys are told apart as == tells them: types with no
// data by type, pointers by address (two pointers to equal values are
// two keys), other values by value (a string or number boxed twice is
// one key).
func TestMemoTableKeys(t *testing.T) {
	type a struct{}
	type b struct{}
	type named struct{ s string }
	p1, p2 := &named{"x"}, &named{"x"}
	s1 := strings.Repeat("k", 3)
	s2 := strings.Repeat("k", 3)
	keys := []any{a{}, b{}, p1, p2, s1, 7, named{"v"}}
	var m memoTable
	for i, k := range keys {
		m.store(k, i)
	}
	for i, k := range keys {
		if v := m.load(k); v != i {
			t.Errorf("key %d (%#v) holds %v", i, k, v)
		}
	}
	// Equal keys made anew.
	for k, want := range map[any]int{a{}: 0, b{}: 1, s2: 4, 3 + 4: 5, named{strings.Repeat("v", 1)}: 6} {
		if v := m.load(k); v != want {
			t.Errorf("equal key %#v holds %v, want %d", k, v, want)
		}
	}
	for _, k := range []any{&named{"x"}, "other", 8, struct{}{}} {
		if v := m.load(k); v != nil {
			t.Errorf("key %#v never stored holds %v", k, v)
		}
	}
}

// BenchmarkMemoLoad looks up every key of a pass in the memo tables of a
// 10,000-line prompt's chunks, pass after pass, as the analyzers do after
// each keystroke: 800 tables of 24 keys (pointer keys, as
// analysis/internal/chunkmemo's, and struct{} keys), each read once per
// pass, so the tables are mostly out of the processor's caches.
func BenchmarkMemoLoad(b *testing.B) {
	type k0 struct{}
	type k1 struct{}
	type k2 struct{}
	type k3 struct{}
	keys := []any{k0{}, k1{}, k2{}, k3{}}
	for i := range 20 {
		keys = append(keys, &struct{ name string }{fmt.Sprint(i)})
	}
	tables := make([]*memoTable, 800)
	for i := range tables {
		tables[i] = &memoTable{}
		for j, k := range keys {
			tables[i].store(k, j)
		}
	}
	b.ResetTimer()
	for range b.N {
		for _, k := range keys {
			for _, t := range tables {
				if t.load(k) == nil {
					b.Fatal("missing")
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)*len(tables)), "ns/load")
}

// TestMemoTableFirstBlockOneObject: a chunk's first memos cost one
// allocation (the first block with its entries inline), however many of
// its slots they fill; every open document keeps a table per chunk.
func TestMemoTableFirstBlockOneObject(t *testing.T) {
	type k1 struct{}
	type k2 struct{}
	v := new(int)
	allocs := testing.AllocsPerRun(100, func() {
		m := new(memoTable)
		memoSink = m // the table on the heap, as a chunk's is
		m.store(k1{}, v)
		m.store(k2{}, v)
		if m.load(k1{}) != v || m.load(k2{}) != v {
			t.Fatal("a memo was lost")
		}
	})
	if allocs != 2 {
		t.Fatalf("a table and its first two memos allocated %v objects, want 2 (the table, its first block)", allocs)
	}
}

var memoSink *memoTable

// TestMemoTableSharedTags: keys whose tags collide (more keys of one
// type than there are tags) each find their own value, whether looked up
// with the interface they were stored with or boxed anew.
func TestMemoTableSharedTags(t *testing.T) {
	type key struct{ n int }
	var m memoTable
	ptrs := make([]*key, 600)
	for i := range ptrs {
		ptrs[i] = &key{i}
		m.store(ptrs[i], i)
		m.store(key{i}, -i)
	}
	for i, p := range ptrs {
		if v := m.load(p); v != i {
			t.Fatalf("pointer key %d holds %v", i, v)
		}
		if v := m.load(key{i}); v != -i {
			t.Fatalf("value key %d holds %v", i, v)
		}
	}
}

// TestMemoTableOrders: tables that hold the same keys in different
// orders each give their own values, looked up in turn (where a key was
// found in one table is only a hint for the next).
func TestMemoTableOrders(t *testing.T) {
	type k0 struct{}
	type k1 struct{}
	type k2 struct{}
	keys := []any{k0{}, k1{}, k2{}}
	var a, b memoTable
	for i, k := range keys {
		a.store(k, i)
		b.store(keys[len(keys)-1-i], 10+len(keys)-1-i)
	}
	for range 3 {
		for i, k := range keys {
			if v := a.load(k); v != i {
				t.Fatalf("table a, key %d holds %v", i, v)
			}
			if v := b.load(k); v != 10+i {
				t.Fatalf("table b, key %d holds %v", i, v)
			}
		}
	}
}
