package lastbyfile

import (
	"runtime"
	"testing"
	"time"
)

// A stored value is returned while it lives, replaced by a later Store,
// and its entry goes once it is collected.
func TestMap(t *testing.T) {
	var m Map[int]
	if m.Load("a.md") != nil {
		t.Fatal("a value for a name never stored")
	}
	a, b := new(int), new(int)
	m.Store("a.md", a)
	if m.Load("a.md") != a {
		t.Fatal("the stored value was not returned")
	}
	m.Store("a.md", b)
	if m.Load("a.md") != b {
		t.Fatal("a later Store did not replace the value")
	}
	runtime.KeepAlive(a)
	b = nil
	deadline := time.Now().Add(10 * time.Second) // failure bound only
	for m.Load("a.md") != nil {
		if time.Now().After(deadline) {
			t.Fatal("a collected value is still returned")
		}
		runtime.GC()
	}
	// The cleanup removes the entry itself, not only its value.
	for {
		if _, ok := m.m.Load("a.md"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the entry of a collected value stays")
		}
		runtime.GC()
		runtime.Gosched()
	}
}
