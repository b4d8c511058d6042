package lsp

import (
	"go.lsp.dev/protocol"
)

// featureMethods are the methods of the feature files added after LSP
// 3.16 or beyond the library's types: semantic tokens, inlay hints,
// links, highlights, selection ranges, call hierarchy, workspace symbols
// and pull diagnostics.
func featureMethods() map[string]method {
	return map[string]method{
		protocol.MethodSemanticTokensFull:  handle((*server).semanticTokensFull),
		protocol.MethodSemanticTokensRange: handle((*server).semanticTokensRange),
		methodInlayHint:                    handle((*server).inlayHints),
	}
}

// featureClientCaps is the part of the client's textDocument capabilities
// the feature files read.
type featureClientCaps struct {
	// Diagnostic is present when the client pulls diagnostics (LSP 3.17).
	Diagnostic *struct{} `json:"diagnostic"`
}

// serverCapabilities adds the LSP 3.17 providers the library's
// ServerCapabilities lacks.
type serverCapabilities struct {
	protocol.ServerCapabilities
	InlayHintProvider  any `json:"inlayHintProvider,omitempty"`
	DiagnosticProvider any `json:"diagnosticProvider,omitempty"`
}

type initializeResultJSON struct {
	Capabilities serverCapabilities   `json:"capabilities"`
	ServerInfo   *protocol.ServerInfo `json:"serverInfo,omitempty"`
}

// initializeResult completes the capabilities of lifecycle.go with the
// feature files' providers.
func initializeResult(caps protocol.ServerCapabilities, info *protocol.ServerInfo) *initializeResultJSON {
	caps.SemanticTokensProvider = semanticProvider()
	return &initializeResultJSON{Capabilities: serverCapabilities{ServerCapabilities: caps, InlayHintProvider: true}, ServerInfo: info}
}
