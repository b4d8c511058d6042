// Package lastbyfile keeps, by file name, the last value an analysis
// made for that file, without keeping it alive: an editor analyses a
// file after every keystroke, and the next analysis starts from the
// last one's products while they exist (analysis/program's builds,
// analysis/flow's walks). An entry goes when its value is collected.
package lastbyfile

import (
	"runtime"
	"sync"
	"weak"
)

// Map holds one weak pointer per file name.
type Map[T any] struct {
	m sync.Map // file name -> weak.Pointer[T]
}

// Load returns the last value stored for name, or nil (none stored, or
// collected since).
func (m *Map[T]) Load(name string) *T {
	w, ok := m.m.Load(name)
	if !ok {
		return nil
	}
	return w.(weak.Pointer[T]).Value()
}

// Store makes v the last value of name.
func (m *Map[T]) Store(name string, v *T) {
	w := weak.Make(v)
	m.m.Store(name, w)
	runtime.AddCleanup(v, func(w weak.Pointer[T]) { m.m.CompareAndDelete(name, w) }, w)
}
