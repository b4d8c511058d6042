package lsp

import (
	"github.com/forge-lsp/forge-lsp/engine/source"
	"strings"

	"go.lsp.dev/protocol"
)

// featureMethods are the methods of the feature files added after LSP
// 3.16 or beyond the library's types: semantic tokens, inlay hints,
// links, highlights, selection ranges, call hierarchy, workspace symbols
// and pull diagnostics.
func featureMethods() map[string]method {
	return map[string]method{
		protocol.MethodSemanticTokensFull:               docMethod(handle((*server).semanticTokensFull), needSemantic),
		protocol.MethodSemanticTokensRange:              docMethod(handle((*server).semanticTokensRange), 0),
		methodInlayHint:                                 docMethod(handle((*server).inlayHints), needBudgets),
		protocol.MethodTextDocumentDocumentHighlight:    docMethod(handle((*server).documentHighlight), 0),
		methodSelectionRange:                            docMethod(handle((*server).selectionRange), 0),
		protocol.MethodTextDocumentDocumentLink:         docMethod(handle((*server).documentLink), needLinks),
		protocol.MethodTextDocumentPrepareCallHierarchy: docMethod(handle((*server).prepareCallHierarchy), 0),
		protocol.MethodCallHierarchyIncomingCalls:       docMethod(handle((*server).incomingCalls), 0),
		protocol.MethodCallHierarchyOutgoingCalls:       docMethod(handle((*server).outgoingCalls), 0),
		protocol.MethodWorkspaceSymbol:                  allDocsMethod(handle((*server).workspaceSymbol)),
		protocol.MethodWorkspaceDidChangeWatchedFiles:   handle((*server).didChangeWatchedFiles),
		methodDocumentDiagnostic:                        docMethod(handle((*server).documentDiagnostic), needFindings|needBudgetFindings),
		methodWorkspaceDiagnostic:                       {async: (*server).workspaceDiagnostic},
		protocol.MethodTextDocumentFormatting:           {async: (*server).formatting},
		protocol.MethodTextDocumentRangeFormatting:      {async: (*server).rangeFormatting},
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
	// PositionEncoding (LSP 3.17) is the encoding negotiated in initialize.
	PositionEncoding   string `json:"positionEncoding,omitempty"`
	InlayHintProvider  any    `json:"inlayHintProvider,omitempty"`
	DiagnosticProvider any    `json:"diagnosticProvider,omitempty"`
}

type initializeResultJSON struct {
	Capabilities serverCapabilities   `json:"capabilities"`
	ServerInfo   *protocol.ServerInfo `json:"serverInfo,omitempty"`
}

// initializeResult completes the capabilities of lifecycle.go with the
// feature files' providers.
func initializeResult(enc source.Encoding, caps protocol.ServerCapabilities, info *protocol.ServerInfo) *initializeResultJSON {
	caps.SemanticTokensProvider = semanticProvider()
	caps.DocumentHighlightProvider = true
	caps.SelectionRangeProvider = true
	caps.DocumentLinkProvider = &protocol.DocumentLinkOptions{}
	caps.CallHierarchyProvider = true
	caps.WorkspaceSymbolProvider = true
	caps.DocumentFormattingProvider = true
	caps.DocumentRangeFormattingProvider = true
	return &initializeResultJSON{Capabilities: serverCapabilities{
		ServerCapabilities: caps,
		PositionEncoding:   enc.String(),
		InlayHintProvider:  true,
		DiagnosticProvider: map[string]any{"identifier": "forge", "interFileDependencies": false, "workspaceDiagnostics": true},
	}, ServerInfo: info}
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
