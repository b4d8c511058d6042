package lsp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"go.lsp.dev/protocol"
)

// signatureHelp is the textDocument/signatureHelp result. The library's
// type omits a zero activeParameter and has string parameter labels only;
// this one always sends the active parameter and labels parameters by
// their offsets in the signature, which is exact even when a parameter's
// text occurs twice.
type signatureHelp struct {
	Signatures      []signatureInformation `json:"signatures"`
	ActiveSignature uint32                 `json:"activeSignature"`
	ActiveParameter uint32                 `json:"activeParameter"`
}

type signatureInformation struct {
	Label           string                 `json:"label"`
	Documentation   protocol.MarkupContent `json:"documentation"`
	Parameters      []parameterInformation `json:"parameters"`
	ActiveParameter uint32                 `json:"activeParameter"`
}

// parameterInformation labels a parameter by its [start, end) UTF-16
// offsets in the signature label.
type parameterInformation struct {
	Label [2]uint32 `json:"label"`
}

func (s *server) signatureHelp(ctx context.Context, p *protocol.SignatureHelpParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, nil
	}
	if h := signatureAt(snap, offsetOf(snap.file, p.Position)); h != nil {
		return h, nil
	}
	return nil, nil
}

// signatureAt describes the engine API function whose argument list
// contains off, from its engine/api entry: signature, parameters, the
// active one, documentation and where the function may be called.
func signatureAt(snap *snapshot, off int) *signatureHelp {
	ix := snap.index()
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
	sig := signatureInformation{Label: label, Parameters: make([]parameterInformation, len(params))}
	for k, prm := range params {
		sig.Parameters[k].Label = [2]uint32{utf16Len(label[:prm.Start+shift]), utf16Len(label[:prm.End+shift])}
	}
	active := argIdx
	if n := len(params); n > 0 && active >= n && params[n-1].Name == "..." {
		active = n - 1
	}
	sig.ActiveParameter = uint32(active)
	_, calleeSpan, _ := dottedNameAt(toks, toks[open-1].Span.End)
	sig.Documentation = protocol.MarkupContent{Kind: protocol.Markdown,
		Value: e.Doc + "\n\n" + availability(e, callContext(snap, ci, calleeSpan.Start))}
	return &signatureHelp{Signatures: []signatureInformation{sig}, ActiveParameter: uint32(active)}
}

// callContext is where the call whose callee starts at off runs: from the
// program model when the chunk parses (which knows add_local handlers and
// the shared-library load), else from the chunk's place.
func callContext(snap *snapshot, ci *program.ChunkTokens, off int) api.Where {
	if c := program.Of(snap.prompt).CallNamedAt(off); c != nil {
		return c.Where
	}
	switch {
	case ci.Section != nil:
		return api.Section
	case ci.Chunk == snap.prompt.Shared:
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

func utf16Len(s string) uint32 {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return uint32(n)
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentSignatureHelp,
		serve: docMethod(handle((*server).signatureHelp), 0),
		advertise: func(c *serverCapabilities) {
			c.SignatureHelpProvider = &protocol.SignatureHelpOptions{
				TriggerCharacters:   []string{"(", ","},
				RetriggerCharacters: []string{")"},
			}
		}}}
})
