package cli

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms Go
// supports on Linux (x86-64, arm64 with 4 KiB pages).
const hugePage = 2 << 20

// hugeHeap asks the kernel to back the next n bytes of the heap with
// transparent huge pages, when the system grants them on request (THP
// "madvise", the common default); with "always" they are already, with
// "never" they are not to be had.
//
// A check of one large prompt with the collector off (floorGC) touches
// every page of its heap once: a 10,000-line prompt faulted in about
// 6,000 pages of 4 KiB, a third of the process's CPU time (about 3.5 µs
// each, in the kernel: clearing, cgroup accounting, the fault itself).
// With 2 MiB pages that is a few dozen faults.
//
// The heap is marked through one large object: a fresh large object is
// memory the runtime has just mapped and not touched, and once it is
// collected its pages are the first the allocator hands out again, to
// the small objects the check makes. The one collection that frees it
// runs before anything else is allocated, over a heap of a few hundred
// KiB.
func hugeHeap(n int64) {
	n &^= hugePage - 1
	if n < 4*hugePage || !hugePagesOnRequest() {
		return
	}
	percent := debug.SetGCPercent(-1) // the object alone is past the first goal
	defer debug.SetGCPercent(percent)
	b := make([]byte, n+hugePage)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int64((p+hugePage-1)&^(hugePage-1) - p) // to the first huge page boundary
	_ = syscall.Madvise(b[off:off+n], syscall.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
}

// hugePagesOnRequest reports whether the kernel's transparent huge pages
// are enabled for memory that asks for them (and only for it).
func hugePagesOnRequest() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(mode, []byte("[madvise]"))
}
