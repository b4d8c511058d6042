package lsp

import (
	"context"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// semanticTokensOptions is SemanticTokensOptions with its legend: the
// library's struct has no legend field.
type semanticTokensOptions struct {
	Legend semanticLegend `json:"legend"`
	Range  bool           `json:"range"`
	Full   bool           `json:"full"`
}

type semanticLegend struct {
	TokenTypes     []string `json:"tokenTypes"`
	TokenModifiers []string `json:"tokenModifiers"`
}

func semanticProvider() *semanticTokensOptions {
	return &semanticTokensOptions{Legend: semanticLegend{TokenTypes: features.SemanticTypes, TokenModifiers: features.SemanticModifiers}, Range: true, Full: true}
}

// semanticTokensResult is SemanticTokens with a data array that is never
// null.
type semanticTokensResult struct {
	Data []uint32 `json:"data"`
}

func (s *server) semanticTokensFull(ctx context.Context, p *protocol.SemanticTokensParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return &semanticTokensResult{Data: []uint32{}}, nil
	}
	return &semanticTokensResult{Data: snap.semanticTokens()}, nil
}

// semanticTokens is the encoded full result, computed once per snapshot.
func (snap *snapshot) semanticTokens() []uint32 {
	data, _ := snap.semantic.get(func() ([]uint32, bool) {
		return encodeSemantic(snap.file, features.SemanticTokens(snap.feat, source.Span{Start: 0, End: len(snap.file.Content)})), true
	})
	return data
}

func (s *server) semanticTokensRange(ctx context.Context, p *protocol.SemanticTokensRangeParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return &semanticTokensResult{Data: []uint32{}}, nil
	}
	r := source.Span{Start: offsetOf(snap.file, p.Range.Start), End: offsetOf(snap.file, p.Range.End)}
	return &semanticTokensResult{Data: encodeSemantic(snap.file, features.SemanticTokens(snap.feat, r))}, nil
}

// encodeSemantic encodes sorted, single-line tokens as LSP's relative
// five-integer groups with columns in the file's position encoding. It walks the text once:
// each token's column is counted from the previous token on its line.
func encodeSemantic(f *source.File, toks []features.SemToken) []uint32 {
	data := make([]uint32, 0, 5*len(toks))
	var prevLine, prevChar uint32
	last := -1
	line := -1          // 1-based line of the previous token
	lineEnd := -1       // end offset of that line
	colOff, col := 0, 0 // an offset on that line and its column
	count := utf16Count
	if enc := f.Encoding(); enc != source.UTF16 {
		count = enc.Count
	}
	for _, t := range toks {
		start, end := int(t.Start), int(t.End)
		if start < last {
			continue // overlapping tokens are not allowed; keep the first
		}
		if start >= lineEnd || line < 0 {
			line = f.Line(start)
			lineEnd = f.LineEnd(line)
			if line < f.LineCount() {
				lineEnd = f.LineStart(line + 1)
			}
			colOff, col = f.LSPLineStart(line), 0
		}
		if start < colOff || end > lineEnd {
			continue
		}
		col += count(f.Content[colOff:start])
		length := count(f.Content[start:end])
		colOff = start
		last = end
		if length == 0 {
			continue
		}
		l, c := uint32(line-1), uint32(col)
		dl, dc := l-prevLine, c
		if dl == 0 {
			dc = c - prevChar
		}
		data = append(data, dl, dc, uint32(length), t.Type, t.Mods)
		prevLine, prevChar = l, c
	}
	return data
}

// utf16Count is the number of UTF-16 code units of b; ASCII is counted
// without decoding.
func utf16Count(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodSemanticTokensFull, serve: docMethod(handle((*server).semanticTokensFull), needSemantic),
		advertise: func(c *serverCapabilities) { c.SemanticTokensProvider = semanticProvider() }},
		feature{method: protocol.MethodSemanticTokensRange, serve: docMethod(handle((*server).semanticTokensRange), 0)}}
})
