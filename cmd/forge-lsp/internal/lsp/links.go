package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"go.lsp.dev/protocol"
)

// documentLinkResult is DocumentLink with a tooltip.
type documentLinkResult struct {
	Range   protocol.Range `json:"range"`
	Target  string         `json:"target,omitempty"`
	Tooltip string         `json:"tooltip,omitempty"`
}

// documentLink links section references to their headings, and the
// frontmatter's input/output paths and store paths to the workspace
// files they name, when those exist.
func (s *server) documentLink(ctx context.Context, p *protocol.DocumentLinkParams) (any, error) {
	snap := s.promptAt(ctx, p.TextDocument.URI)
	if snap == nil {
		return []documentLinkResult{}, nil
	}
	pin := pinOf(ctx)
	if pin == nil {
		return []documentLinkResult{}, nil // not a request (a notification)
	}
	if pin.snap == snap && pin.links != nil {
		return pin.links, nil
	}
	return documentLinks(snap, pin.roots), nil
}

// documentLinks adapts features.Links: a section link targets the
// heading's line of this document, a file link the file. It looks the
// named files up on disk, so a document request computes it before its
// handler runs (needLinks).
func documentLinks(snap *snapshot, roots []string) []documentLinkResult {
	out := []documentLinkResult{}
	f := snap.file
	isFile := func(path string) bool {
		fi, err := os.Stat(path)
		return err == nil && !fi.IsDir()
	}
	for _, l := range features.Links(snap.feat, fileDirs(snap, roots), isFile) {
		target := "file://" + filepath.ToSlash(l.Path)
		if l.Section != nil {
			line, _ := f.LSPPosition(l.Section.Heading.Span.Start)
			target = fmt.Sprintf("%s#L%d", snap.uri, line+1)
		}
		out = append(out, documentLinkResult{Range: lspRange(f, l.Span), Target: target, Tooltip: l.Tooltip})
	}
	sort.SliceStable(out, func(i, j int) bool { return before(out[i].Range.Start, out[j].Range.Start) })
	return out
}

// fileDirs are the directories relative paths are looked up in: the
// prompt's directory, then the workspace roots.
func fileDirs(snap *snapshot, roots []string) []string {
	var dirs []string
	if strings.HasPrefix(string(snap.uri), "file:") {
		dirs = append(dirs, filepath.Dir(snap.file.Name))
	}
	return append(dirs, roots...)
}

var _ = register(func() []feature {
	return []feature{feature{method: protocol.MethodTextDocumentDocumentLink,
		serve:     docMethod(handle((*server).documentLink), needLinks),
		advertise: func(c *serverCapabilities) { c.DocumentLinkProvider = &protocol.DocumentLinkOptions{} }}}
})
