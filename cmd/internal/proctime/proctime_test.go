package proctime

import (
	"runtime"
	"testing"
)

// TestCPUAdvances: spinning for a while shows in the process's CPU time.
func TestCPUAdvances(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("CPU time is not read on this system")
	}
	start := CPU()
	x := 0
	for CPU()-start < 20_000_000 { // 20 ms
		x++
	}
	if x == 0 || CPU() <= start {
		t.Fatalf("CPU time did not advance: %v then %v", start, CPU())
	}
}
