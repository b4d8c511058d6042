package lsp

import (
	"context"
	"encoding/json"
	"github.com/forge-lsp/forge-lsp/engine/source"

	"go.lsp.dev/protocol"
)

// Command names the server executes (workspace/executeCommand). Editor
// clients bind to these exact strings; see docs/lsp.md.
const (
	// commandRunSection runs the H1 and then one section
	// (docs/language.md#running-one-section).
	commandRunSection = "forge.runSection"
	// commandRunPrompt runs the whole prompt.
	commandRunPrompt = "forge.runPrompt"
)

// initializeParams is the subset of InitializeParams the server reads. It
// is decoded into our own type because the library's ClientCapabilities
// rejects some shapes real clients send.
type initializeParams struct {
	InitializationOptions json.RawMessage `json:"initializationOptions"`
	RootURI               string          `json:"rootUri"`
	WorkspaceFolders      []struct {
		URI string `json:"uri"`
	} `json:"workspaceFolders"`
	Capabilities struct {
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Workspace struct {
			Configuration         bool `json:"configuration"`
			DidChangeWatchedFiles struct {
				DynamicRegistration bool `json:"dynamicRegistration"`
			} `json:"didChangeWatchedFiles"`
			Diagnostics struct {
				RefreshSupport bool `json:"refreshSupport"`
			} `json:"diagnostics"`
		} `json:"workspace"`
		TextDocument featureClientCaps `json:"textDocument"`
		General      struct {
			// PositionEncodings (LSP 3.17) are the encodings the client
			// can count columns in, most preferred first.
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
	} `json:"capabilities"`
}

// textDocumentSync is TextDocumentSyncOptions with an empty save option.
// Sync is incremental: didChange decodes its own change events, whose
// range is a pointer (documents.go), so full and ranged changes differ.
type textDocumentSync struct {
	OpenClose bool                          `json:"openClose"`
	Change    protocol.TextDocumentSyncKind `json:"change"`
	Save      struct{}                      `json:"save"`
}

func (s *server) initialize(ctx context.Context, p *initializeParams) (any, error) {
	s.client.features = p.Capabilities.TextDocument
	s.client.watchRegistration = p.Capabilities.Workspace.DidChangeWatchedFiles.DynamicRegistration
	s.client.diagnosticRefresh = p.Capabilities.Workspace.Diagnostics.RefreshSupport
	s.roots = workspaceRoots(p)
	s.client.workDoneProgress = p.Capabilities.Window.WorkDoneProgress
	s.client.configuration = p.Capabilities.Workspace.Configuration
	s.client.initOptions = p.InitializationOptions
	s.client.encoding = negotiateEncoding(p.Capabilities.General.PositionEncodings)
	if len(p.InitializationOptions) > 0 {
		s.setConfig(s.cfg.merge(configFromJSON(p.InitializationOptions)))
	}
	s.state = stateRunning
	return initializeResult(s.client.encoding, &protocol.ServerInfo{Name: "forge-lsp", Version: s.opts.Version}), nil
}

// negotiateEncoding picks the position encoding from the client's offer
// (LSP 3.17 general.positionEncodings): UTF-8 when offered, since the
// server's own offsets are bytes and converting is then free; UTF-16, the
// protocol's default and mandatory encoding, otherwise.
func negotiateEncoding(offered []string) source.Encoding {
	for _, o := range offered {
		if e, ok := source.ParseEncoding(o); ok && e == source.UTF8 {
			return e
		}
	}
	return source.UTF16
}

func (s *server) initialized(ctx context.Context, _ *json.RawMessage) (any, error) {
	s.fetchConfiguration()
	s.refreshModelCatalog()
	if len(s.roots) > 0 {
		s.startWorkspace()
		s.watchFiles()
	}
	return nil, nil
}

func (s *server) shutdown(ctx context.Context, _ *json.RawMessage) (any, error) {
	s.state = stateShutdown
	for _, d := range s.docs {
		d.cancelDiagnostics()
	}
	s.reqMu.Lock()
	for _, c := range s.runs {
		c()
	}
	s.reqMu.Unlock()
	return nil, nil
}

func (s *server) didChangeConfiguration(ctx context.Context, p *struct {
	Settings json.RawMessage `json:"settings"`
}) (any, error) {
	// Clients that push settings send them here; clients that support
	// workspace/configuration get asked again, which is authoritative.
	if len(p.Settings) > 0 && string(p.Settings) != "null" {
		s.setConfig(s.baseConfig().merge(configFromJSON(p.Settings)))
		s.refreshModelCatalog()
	}
	s.fetchConfiguration()
	return nil, nil
}

// baseConfig is the environment plus initializationOptions.
func (s *server) baseConfig() config {
	c := configFromEnv(s.opts.Getenv)
	if len(s.client.initOptions) > 0 {
		c = c.merge(configFromJSON(s.client.initOptions))
	}
	return c
}

// fetchConfiguration asks the client for the "forge" section. It runs in
// a goroutine: the reply arrives through the reader that is currently
// blocked in this very dispatch.
func (s *server) fetchConfiguration() {
	if !s.client.configuration {
		return
	}
	s.goBackground("workspace/configuration", func() {
		var res []json.RawMessage
		params := &protocol.ConfigurationParams{Items: []protocol.ConfigurationItem{{Section: configSection}}}
		if _, err := s.conn.Call(s.ctx, protocol.MethodWorkspaceConfiguration, params, &res); err != nil {
			s.logger.Printf("workspace/configuration: %v", err)
			return
		}
		if len(res) == 0 || len(res[0]) == 0 || string(res[0]) == "null" {
			return
		}
		s.mu.Lock()
		s.setConfig(s.baseConfig().merge(configFromJSON(res[0])))
		s.refreshModelCatalog()
		s.mu.Unlock()
	})
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodInitialize, serve: handle((*server).initialize)},
		feature{method: protocol.MethodInitialized, serve: handle((*server).initialized)},
		feature{method: protocol.MethodShutdown, serve: handle((*server).shutdown)},
		feature{method: protocol.MethodWorkspaceDidChangeConfiguration, serve: handle((*server).didChangeConfiguration)}}
})
