package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// documentLinkResult is DocumentLink with a tooltip.
type documentLinkResult struct {
	Range   protocol.Range `json:"range"`
	Target  string         `json:"target,omitempty"`
	Tooltip string         `json:"tooltip,omitempty"`
}

// storeCalls are the store functions whose first argument is a path.
var storeCalls = map[string]bool{
	"store.read": true, "store.write": true, "store.append": true, "store.read_numbered": true,
	"store.str_replace": true, "store.delete": true, "store.exists": true,
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

// documentLinks computes a prompt's links. It looks the named files up on
// disk, so a document request computes it before it locks (needLinks).
func documentLinks(snap *snapshot, roots []string) []documentLinkResult {
	out := []documentLinkResult{}
	f := snap.file
	ix := snap.index()
	for _, r := range ix.Refs {
		if r.Kind != program.RefSection || r.Target == nil || r.Target.Heading == nil {
			continue
		}
		line, _ := f.LSPPosition(r.Target.Heading.Span.Start)
		out = append(out, documentLinkResult{
			Range:   lspRange(f, r.Span),
			Target:  fmt.Sprintf("%s#L%d", snap.uri, line+1),
			Tooltip: "Go to " + r.Target.Address(),
		})
	}
	dirs := fileDirs(snap, roots)
	fileLink := func(sp source.Span, rel, what string) {
		if rel == "" || !source.InDir(".", filepath.FromSlash(rel)) {
			return
		}
		for _, d := range dirs {
			path := filepath.Join(d, filepath.FromSlash(rel))
			if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
				out = append(out, documentLinkResult{Range: lspRange(f, sp), Target: "file://" + filepath.ToSlash(path), Tooltip: what + " " + rel})
				return
			}
		}
	}
	if fm := snap.prompt.Frontmatter; fm != nil {
		for _, key := range []string{"input", "output"} {
			fd := fm.Field(key)
			if fd == nil {
				continue
			}
			for _, c := range fd.Children {
				if c.Key == "path" && c.Scalar {
					fileLink(valueText(f, c), c.Value, "Open "+key)
				}
			}
		}
	}
	prog := snap.program()
	for _, c := range prog.Calls {
		if !storeCalls[c.Canonical()] {
			continue
		}
		if v, sp, ok := prog.StringArg(c, 0); ok && sp.Len() >= 2 {
			fileLink(source.Span{Start: sp.Start + 1, End: sp.End - 1}, v, "Open store file")
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return before(out[i].Range.Start, out[j].Range.Start) })
	return out
}

// valueText is a field value's span without quotes.
func valueText(f *source.File, fd *parse.Field) source.Span {
	sp := fd.ValueSpan
	if fd.Quoted && sp.Len() >= 2 {
		sp = source.Span{Start: sp.Start + 1, End: sp.End - 1}
	}
	return sp
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
