package lsp

import (
	"context"
	"unicode/utf16"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
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

// signatureHelp adapts features.SignatureAt.
func (s *server) signatureHelp(ctx context.Context, p *protocol.SignatureHelpParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return nil, nil
	}
	if h := toSignatureHelp(features.SignatureAt(snap.feat, offsetOf(snap.file, p.Position))); h != nil {
		return h, nil
	}
	return nil, nil
}

// toSignatureHelp converts a signature (parameter offsets in bytes) to
// the protocol's (UTF-16 offsets); nil stays nil.
func toSignatureHelp(sig *features.Signature) *signatureHelp {
	if sig == nil {
		return nil
	}
	info := signatureInformation{Label: sig.Label, Parameters: make([]parameterInformation, len(sig.Params)),
		Documentation: protocol.MarkupContent{Kind: protocol.Markdown, Value: sig.Doc}, ActiveParameter: uint32(sig.Active)}
	for k, prm := range sig.Params {
		info.Parameters[k].Label = [2]uint32{utf16Len(sig.Label[:prm[0]]), utf16Len(sig.Label[:prm[1]])}
	}
	return &signatureHelp{Signatures: []signatureInformation{info}, ActiveParameter: uint32(sig.Active)}
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
