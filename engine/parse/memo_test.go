package parse

import (
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
