package cores

import (
	"runtime"
	"testing"
)

// Helpers get only the cores no holder counts, and give them back.
func TestHelpTakesIdleCoresOnly(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	base := Busy()
	if base != 0 {
		t.Fatalf("%d cores busy before the test", base)
	}
	r1 := Hold()
	if got := Help(8); got != 3 {
		t.Fatalf("one holder of 4 cores: Help(8) took %d, want 3", got)
	}
	if got := Help(1); got != 0 {
		t.Fatalf("every core busy: Help(1) took %d", got)
	}
	Release(3)
	r2 := Hold()
	r3 := Hold()
	r4 := Hold()
	r5 := Hold() // more analyses than cores: holders never wait
	if got := Busy(); got != 5 {
		t.Fatalf("%d busy with five holders", got)
	}
	if got := Help(1); got != 0 {
		t.Fatalf("oversubscribed: Help(1) took %d", got)
	}
	r5()
	r5() // twice is once
	r4()
	r3()
	if got := Help(4); got != 2 {
		t.Fatalf("two holders of 4 cores: Help(4) took %d, want 2", got)
	}
	Release(2)
	r2()
	r1()
	if got := Busy(); got != 0 {
		t.Fatalf("%d busy after every release", got)
	}
}
