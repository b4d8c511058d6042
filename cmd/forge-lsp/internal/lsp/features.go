package lsp

import (
	"github.com/forge-lsp/forge-lsp/engine/source"
	"strings"

	"go.lsp.dev/protocol"
)

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
	// PositionEncoding (LSP 3.17) is the encoding negotiated in initialize.
	PositionEncoding   string `json:"positionEncoding,omitempty"`
	InlayHintProvider  any    `json:"inlayHintProvider,omitempty"`
	DiagnosticProvider any    `json:"diagnosticProvider,omitempty"`
}

type initializeResultJSON struct {
	Capabilities serverCapabilities   `json:"capabilities"`
	ServerInfo   *protocol.ServerInfo `json:"serverInfo,omitempty"`
}

// initializeResult is the initialize reply: every registered feature's
// capability (registry.go) and the negotiated position encoding.
func initializeResult(enc source.Encoding, info *protocol.ServerInfo) *initializeResultJSON {
	caps := serverCapabilities{PositionEncoding: enc.String()}
	advertise(&caps)
	return &initializeResultJSON{Capabilities: caps, ServerInfo: info}
}

// workspaceRoots are the file system paths of the workspace folders, or
// of the root URI when the client sends no folders.
func workspaceRoots(p *initializeParams) []string {
	var uris []string
	for _, f := range p.WorkspaceFolders {
		uris = append(uris, f.URI)
	}
	if len(uris) == 0 && p.RootURI != "" {
		uris = append(uris, p.RootURI)
	}
	var out []string
	for _, u := range uris {
		if strings.HasPrefix(u, "file:") {
			out = append(out, fileName(protocol.DocumentURI(u)))
		}
	}
	return out
}
