package lsp

import (
	"fmt"
	"sort"
	"sync"
)

// The registry is the one table of the methods the server serves. Each
// feature file registers its own entries next to its handler:
//
//	var _ = register(func() []feature {
//		return []feature{{method: protocol.MethodTextDocumentHover,
//			serve:     docMethod(handle((*server).hover), needBudgets|needCatalog),
//			advertise: func(c *serverCapabilities) { c.HoverProvider = true }}}
//	})
//
// so adding an LSP feature is one file (and its marker test): dispatch
// finds the handler here, requests.go makes ready what serve's needs
// name before the handler runs, and initialize advertises what each
// entry's advertise sets (docs/architecture.md#where-to-add-things).

// feature is one registry entry.
type feature struct {
	// method is the LSP method name.
	method string
	// serve is how the method runs: a handler adapted by handle, marked
	// with docMethod (a request on one document, with the derived data it
	// needs) or allDocsMethod, or an async method that replies itself.
	serve method
	// advertise sets the capability the method is announced under in the
	// initialize reply; nil for methods that need none (notifications,
	// lifecycle, resolve requests).
	advertise func(c *serverCapabilities)
}

// registrars are the feature files' registrations. They run on the
// first server's first message, not at process start: a command that
// serves no LSP pays nothing for the table (TestPackageInitIsLazy).
var registrars []func() []feature

// register adds a feature file's entries to the registry. It returns a
// value so that a file can call it from a package-level var.
func register(entries func() []feature) bool {
	registrars = append(registrars, entries)
	return true
}

var (
	registryOnce sync.Once
	registry     map[string]feature
)

// methods returns the registry: method name to entry. It panics on a
// method registered twice (two files claiming one method is a
// programming error every test run catches).
func methods() map[string]feature {
	registryOnce.Do(func() {
		registry = map[string]feature{}
		for _, r := range registrars {
			for _, f := range r() {
				if f.method == "" {
					panic("lsp: feature registered without a method")
				}
				if _, dup := registry[f.method]; dup {
					panic(fmt.Sprintf("lsp: method %s registered twice", f.method))
				}
				registry[f.method] = f
			}
		}
	})
	return registry
}

// advertise applies every registered capability to c, in method order so
// that the reply is the same on every start.
func advertise(c *serverCapabilities) {
	registry := methods()
	names := make([]string, 0, len(registry))
	for name, f := range registry {
		if f.advertise != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		registry[name].advertise(c)
	}
}
