package features

import (
	"fmt"
	"slices"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
)

// Signature is the engine API function whose argument list holds the
// cursor: its signature as written, Markdown documentation, each
// parameter's [start, end) byte offsets in Label, and the active one.
type Signature struct {
	Label  string
	Doc    string
	Params [][2]int
	Active int
}

// SignatureAt describes the engine API function whose argument list
// contains off, from its engine/api entry: signature, parameters, the
// active one, documentation and where the function may be called; nil
// outside a call of one.
func SignatureAt(snap *Snapshot, off int) *Signature {
	ix := snap.Symbols()
	ci := ix.ChunkAt(off)
	if ci == nil {
		return nil
	}
	toks := ci.Tokens()
	// Tokens that start before the cursor are the call's text so far (a
	// string the cursor is in counts as the argument being typed; after a
	// closing parenthesis the call is complete).
	i := luatok.At(toks, off)
	name, argIdx, open := enclosingCall(toks, i)
	if open < 1 || strings.HasSuffix(name, "[") {
		return nil
	}
	e := lookupAPI(ix, name)
	if e == nil || !e.IsFunc() {
		return nil
	}
	label, shift := e.Signature, 0
	if name != e.Name && strings.HasPrefix(label, e.Name+"(") && slices.Contains(e.Synonyms, name) {
		// Written with an upstream spelling (tools.need): show that name.
		label, shift = name+label[len(e.Name):], len(name)-len(e.Name)
	}
	params := e.Params()
	sig := &Signature{Label: label, Params: make([][2]int, len(params))}
	for k, prm := range params {
		sig.Params[k] = [2]int{prm.Start + shift, prm.End + shift}
	}
	active := argIdx
	if n := len(params); n > 0 && active >= n && params[n-1].Name == "..." {
		active = n - 1
	}
	sig.Active = active
	_, calleeSpan, _ := dottedNameAt(toks, toks[open-1].Span.End)
	sig.Doc = e.Doc + "\n\n" + availability(e, callContext(snap, ci, calleeSpan.Start))
	return sig
}

// callContext is where the call whose callee starts at off runs: from the
// program model when the chunk parses (which knows add_local handlers and
// the shared-library load), else from the chunk's place.
func callContext(snap *Snapshot, ci *program.ChunkTokens, off int) api.Where {
	if c := program.Of(snap.Prompt).CallNamedAt(off); c != nil {
		return c.Where
	}
	switch {
	case ci.Section != nil:
		return api.Section
	case ci.Chunk == snap.Prompt.Shared:
		return api.SharedLoad
	}
	return api.H1
}

// availability says where an API function may be called, and whether it
// may be called here.
func availability(e *api.Entry, here api.Where) string {
	where := "everywhere"
	if e.Allowed != api.Anywhere {
		where = e.Allowed.String()
	}
	s := fmt.Sprintf("Available in: %s.", where)
	if e.Host && e.Allowed&here == 0 {
		s += fmt.Sprintf(" **Not available here** (%s): the call fails.", here)
	}
	return s
}
