package lsp

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/features"
	"github.com/forge-lsp/forge-lsp/engine/api"
	"go.lsp.dev/protocol"
)

// TestEveryAPIEntry proves that adding a Lua API function needs only its
// engine/api entry (and its implementation): every entry gets hover,
// completion and, for functions, signature help from the table, and the
// analyzer's placement check follows the entry's Allowed contexts.
func TestEveryAPIEntry(t *testing.T) {
	for _, e := range api.All() {
		// Handle members are used on handle variables declared in the H1.
		written, where := e.Name, api.H1
		switch {
		case strings.HasPrefix(e.Name, "Tool."):
			written = "web." + strings.TrimPrefix(e.Name, "Tool.")
		case strings.HasPrefix(e.Name, "Model:"):
			written = "writer:" + strings.TrimPrefix(e.Name, "Model:")
		case strings.HasPrefix(e.Name, "Model."):
			written = "writer." + strings.TrimPrefix(e.Name, "Model.")
		case e.Defined&api.H1 == 0:
			where = api.Section
		}
		use := "x = " + written
		if e.IsFunc() {
			use = written + "()"
		}
		text, at := apiPrompt(where, use)
		snap := newSnapshot("file:///t.md", 1, []byte(text), 1<<20)
		at += strings.Index(use, written)
		last := at + len(written) - 1 // on the name's last segment

		if h, ok := features.HoverAt(snap.feat, last); !ok || !strings.Contains(h.Markdown, e.Signature) || !strings.Contains(h.Markdown, e.Doc) {
			t.Errorf("%s: hover %q lacks the table's signature and doc", e.Name, h.Markdown)
		}

		// Completion of the name with its last character missing.
		ctext, cat := apiPrompt(where, "x = "+written[:len(written)-1])
		member := written[strings.LastIndexAny(written, ".:")+1:]
		csnap := newSnapshot("file:///t.md", 1, []byte(ctext), 1<<20)
		if !hasItem(completionItems(csnap.file, features.CompleteAt(csnap.feat, cat+len("x = ")+len(written)-1)), member, e.Signature) {
			t.Errorf("%s: no completion %q with the table's signature", e.Name, member)
		}

		if !e.IsFunc() {
			continue
		}
		h := toSignatureHelp(features.SignatureAt(snap.feat, at+len(written)+1))
		if h == nil || len(h.Signatures) != 1 || h.Signatures[0].Label != e.Signature ||
			len(h.Signatures[0].Parameters) != len(e.Params()) || !strings.Contains(h.Signatures[0].Documentation.Value, e.Doc) {
			t.Errorf("%s: signature help %+v does not come from the table", e.Name, h)
		}

		if !e.Host || written != e.Name {
			continue
		}
		for _, ctx := range []api.Where{api.H1, api.Section, api.Handler, api.SharedLoad} {
			text, at := apiPrompt(ctx, use) // a call: the name is first
			snap := newSnapshot("file:///t.md", 1, []byte(text), 1<<20)
			got := false
			for _, d := range checker.Check(snap.prompt, nil) {
				if d.Span.Start == at && (d.Code == "misplaced-call" || d.Code == "add-local-in-h1" || d.Code == "jump-in-handler") {
					got = true
				}
			}
			if want := e.Allowed&ctx == 0; got != want {
				t.Errorf("%s in %v: placement diagnostic %v, want %v (Allowed: %v)", e.Name, ctx, got, want, e.Allowed)
			}
		}
	}
}

// apiPrompt returns a prompt with use in a Lua chunk running in context w,
// and use's offset. The H1 declares a tool handle web and a model handle
// writer (named unlike their aliases).
func apiPrompt(w api.Where, use string) (string, int) {
	const head = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n"
	const handles = "```lua\nlocal web = tools.bind(\"search\", \"web search\")\nlocal writer = models.default(\"fast\", \"a model\")\n"
	var b strings.Builder
	b.WriteString(head)
	switch w {
	case api.SharedLoad:
		b.WriteString("```lua shared\n")
	case api.H1:
		b.WriteString(handles)
	default:
		b.WriteString(handles + "```\n\n## S\n\n```lua\n")
		if w == api.Handler {
			b.WriteString("tools.add_local(\"h\", \"d\", {}, function(args)\n")
		}
	}
	at := b.Len()
	b.WriteString(use + "\n")
	if w == api.Handler {
		b.WriteString("return \"\"\nend)\n")
	}
	b.WriteString("```\n\nProse.\n\n## S2\n\nMore.\n")
	return b.String(), at
}

func hasItem(items []protocol.CompletionItem, label, detail string) bool {
	for _, it := range items {
		if it.Label == label && it.Detail == detail {
			return true
		}
	}
	return false
}
