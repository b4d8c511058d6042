package lsp

import (
	"context"

	"encoding/json"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

func (s *server) hover(ctx context.Context, p *protocol.HoverParams) (any, error) { return nil, nil }
func (s *server) completion(ctx context.Context, p *protocol.CompletionParams) (any, error) {
	return nil, nil
}
func (s *server) definition(ctx context.Context, p *protocol.DefinitionParams) (any, error) {
	return nil, nil
}
func (s *server) references(ctx context.Context, p *protocol.ReferenceParams) (any, error) {
	return nil, nil
}
func (s *server) prepareRename(ctx context.Context, p *protocol.PrepareRenameParams) (any, error) {
	return nil, nil
}
func (s *server) rename(ctx context.Context, p *protocol.RenameParams) (any, error) { return nil, nil }
func (s *server) codeAction(ctx context.Context, p *protocol.CodeActionParams) (any, error) {
	return nil, nil
}
func (s *server) progressCancel(ctx context.Context, p *protocol.WorkDoneProgressCancelParams) (any, error) {
	return nil, nil
}
func (s *server) executeCommand(ctx context.Context, params json.RawMessage, reply jsonrpc2.Replier) {
	_ = reply(ctx, nil, nil)
}
