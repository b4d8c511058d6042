package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/forge-lsp/forge-lsp/engine/format"
	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Formatting: textDocument/formatting and textDocument/rangeFormatting,
// the style of `forge-lsp fmt` (engine/format, docs/formatting.md). The
// handlers pin the document's version in message order, then format,
// read stylua.toml and prove the result outside the server lock; the
// reply is one edit of whole lines. A prompt that does not parse gets no
// edit (its diagnostics say why); a result that fails the formatter's
// proof is an InternalError naming the file, and nothing changes.

var _ = register(func() []feature {
	return []feature{
		{method: protocol.MethodTextDocumentFormatting, serve: method{async: (*server).formatting},
			advertise: func(c *serverCapabilities) { c.DocumentFormattingProvider = true }},
		{method: protocol.MethodTextDocumentRangeFormatting, serve: method{async: (*server).rangeFormatting},
			advertise: func(c *serverCapabilities) { c.DocumentRangeFormattingProvider = true }},
	}
})

type formattingParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	// Range is set for rangeFormatting.
	Range *protocol.Range `json:"range"`
}

func (s *server) formatting(ctx context.Context, raw json.RawMessage, reply jsonrpc2.Replier) {
	s.formatRequest(ctx, protocol.MethodTextDocumentFormatting, raw, reply)
}

func (s *server) rangeFormatting(ctx context.Context, raw json.RawMessage, reply jsonrpc2.Replier) {
	s.formatRequest(ctx, protocol.MethodTextDocumentRangeFormatting, raw, reply)
}

func (s *server) formatRequest(ctx context.Context, name string, raw json.RawMessage, reply jsonrpc2.Replier) {
	var p formattingParams
	if err := json.Unmarshal(raw, &p); err != nil {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err))
		return
	}
	if name == protocol.MethodTextDocumentRangeFormatting && p.Range == nil {
		_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: rangeFormatting needs a range"))
		return
	}
	s.mu.Lock()
	d := s.docs[uriKey(p.TextDocument.URI)]
	var pin docPin
	if d != nil {
		pin = s.pinDoc(d)
	}
	s.mu.Unlock()
	if d == nil {
		_ = reply(ctx, []protocol.TextEdit{}, nil)
		return
	}
	s.goRequest(name, reply, func() {
		_ = s.finish(ctx, name, true, reply, func() (any, error) {
			return s.formatEdits(s.ready(pin), p.Range)
		})
	})
}

// formatEdits formats a snapshot (or the Lua statements rng covers).
func (s *server) formatEdits(snap *snapshot, rng *protocol.Range) (any, error) {
	edits := []protocol.TextEdit{}
	if snap == nil || !snap.isPrompt || snap.prompt == nil {
		return edits, nil
	}
	path := fileName(snap.uri)
	opt, _, err := format.Lookup(filepath.Dir(path), func(p string) ([]byte, error) {
		return fsread.ReadFile(p, fsread.Config)
	})
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%v", err)
	}
	src := snap.file.Content
	var pe *format.ParseError
	if rng != nil {
		// The snapshot's parse: a range format parses nothing more than
		// the fence it changes, and its edit costs the fence's size.
		e, err := format.RangeEdit(snap.prompt, offsetOf(snap.file, rng.Start), offsetOf(snap.file, rng.End), opt)
		if errors.As(err, &pe) {
			return edits, nil
		}
		if err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%v", err)
		}
		if e != nil {
			edits = append(edits, protocol.TextEdit{Range: protocol.Range{Start: lspPos(snap.file, e.Start), End: lspPos(snap.file, e.End)}, NewText: e.New})
		}
		return edits, nil
	}
	out, err := format.Source(path, src, opt)
	if err == nil && crlfOnly(src) {
		// fmt writes LF; the editor keeps the document's CRLF, and the
		// edit stays on the lines the formatting changes.
		out = bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
	}
	if errors.As(err, &pe) {
		return edits, nil
	}
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%v", err)
	}
	for _, e := range format.Diff(src, out) {
		edits = append(edits, protocol.TextEdit{Range: protocol.Range{Start: lspPos(snap.file, e.Start), End: lspPos(snap.file, e.End)}, NewText: e.New})
	}
	return edits, nil
}

// crlfOnly reports whether every line break of src is CRLF (and it has
// one).
func crlfOnly(src []byte) bool {
	n := bytes.Count(src, []byte("\r\n"))
	return n > 0 && n == bytes.Count(src, []byte("\n"))
}
