package lsp

import (
	"fmt"
	"sort"
)

// The registry is the one table of the methods the server serves. Each
// feature file registers its own entries next to its handler:
//
//	var _ = register(feature{
//		method:    protocol.MethodTextDocumentHover,
//		serve:     docMethod(handle((*server).hover), needBudgets|needCatalog),
//		advertise: func(c *serverCapabilities) { c.HoverProvider = true },
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

// registry maps method names to their entries. It is filled by the
// package's variable initialisers, before any server starts, and only
// read afterwards.
var registry = map[string]feature{}

// register adds fs to the registry. It panics on a method registered
// twice: two files claiming one method is a programming error caught by
// every test run.
func register(fs ...feature) bool {
	for _, f := range fs {
		if f.method == "" {
			panic("lsp: feature registered without a method")
		}
		if _, dup := registry[f.method]; dup {
			panic(fmt.Sprintf("lsp: method %s registered twice", f.method))
		}
		registry[f.method] = f
	}
	return true
}

// methods returns the method table dispatch serves.
func methods() map[string]feature { return registry }

// advertise applies every registered capability to c, in method order so
// that the reply is the same on every start.
func advertise(c *serverCapabilities) {
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
