package features

import (
	"path/filepath"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// Link is a document link: to a section's heading (Section) or to a file
// (Path), with its tooltip.
type Link struct {
	Span    source.Span
	Section *parse.Section
	Path    string
	Tooltip string
}

// storeCalls are the store functions whose first argument is a path.
var storeCalls = map[string]bool{
	"store.read": true, "store.write": true, "store.append": true, "store.read_numbered": true,
	"store.str_replace": true, "store.delete": true, "store.exists": true,
}

// Links links section references to their headings, and the
// frontmatter's input/output paths and store paths to the files they
// name: the first of dirs (in order) where isFile says the relative path
// is a file. isFile is the caller's look at the file system; Links itself
// reads nothing.
func Links(snap *Snapshot, dirs []string, isFile func(path string) bool) []Link {
	var out []Link
	f := snap.File
	for _, r := range snap.Symbols().Refs {
		if r.Kind != program.RefSection || r.Target == nil || r.Target.Heading == nil {
			continue
		}
		out = append(out, Link{Span: r.Span, Section: r.Target, Tooltip: "Go to " + r.Target.Address()})
	}
	fileLink := func(sp source.Span, rel, what string) {
		if rel == "" || !source.InDir(".", filepath.FromSlash(rel)) {
			return
		}
		for _, d := range dirs {
			path := filepath.Join(d, filepath.FromSlash(rel))
			if isFile(path) {
				out = append(out, Link{Span: sp, Path: path, Tooltip: what + " " + rel})
				return
			}
		}
	}
	if fm := snap.Prompt.Frontmatter; fm != nil {
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
	prog := snap.Program()
	for _, c := range prog.Calls {
		if !storeCalls[c.Canonical()] {
			continue
		}
		if v, sp, ok := prog.StringArg(c, 0); ok && sp.Len() >= 2 {
			fileLink(source.Span{Start: sp.Start + 1, End: sp.End - 1}, v, "Open store file")
		}
	}
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
