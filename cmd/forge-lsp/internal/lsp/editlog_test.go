package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
	"go.lsp.dev/protocol"
)

// parseDump renders what a parse found, for comparing two parses.
func parseDump(t *testing.T, p *parse.Prompt) string {
	t.Helper()
	var out bytes.Buffer
	put := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	put([]any{p.Frontmatter, p.BodyStart, p.H1, p.Title, p.H1Region, p.H1Live, p.Shared, p.H1Blocks, p.Description, p.Errors})
	// What the exported fields do not show: where prose text maps in the
	// file, placeholders' file spans, chunks' compiled identity and
	// lines, and the tree's links.
	blocks := func(bs []*parse.Block) {
		for _, b := range bs {
			if b.Kind == parse.LuaBlock {
				put([]any{b.Chunk.Key() != nil, b.Chunk.StmtLines()})
				continue
			}
			offs := make([]int, 0, len(b.Prose.Text)+1)
			for i := 0; i <= len(b.Prose.Text); i++ {
				offs = append(offs, b.Prose.FileOffset(i))
			}
			tm, err := b.Prose.Template()
			put([]any{offs, tm, err})
		}
	}
	blocks(p.H1Blocks)
	var visit func(*parse.Section, []*parse.Section)
	visit = func(parent *parse.Section, ss []*parse.Section) {
		for _, s := range ss {
			if s.Parent != parent {
				t.Fatalf("section %q: parent %p, want %p", s.Name, s.Parent, parent)
			}
			put([]any{s.Heading, s.Name, s.Level, s.Content, s.Live, s.OffWalk, s.Marker, s.Dead, s.Blocks, s.Items, s.IsList, len(s.Children)})
			blocks(s.Blocks)
			visit(s, s.Children)
		}
	}
	visit(nil, p.Sections)
	return out.String()
}

// TestEditedParseMatchesParse types random edits into an open prompt
// through didChange (ranged changes with columns in each position
// encoding, over LF, CRLF and lone-CR lines and characters outside the
// BMP, several changes per notification, and now and then a whole new
// text) and parses versions as a diagnostics job does (pinDoc, ready):
// the change the document tells the parser is true of the text the
// reused parse came from and the pinned one, and the parse reads the same
// as a parse from nothing.
func TestEditedParseMatchesParse(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 35))
	pieces := []string{"x", " ", "\n", "\r\n", "\r", "😀", "é", "## New\n", "```lua\nlocal a = 1\n```\n", "```\n", "# ", "{{ var.x }}"}
	for _, enc := range []source.Encoding{source.UTF16, source.UTF8, source.UTF32} {
		for _, crlf := range []bool{false, true} {
			s := newServer(options{Debounce: time.Hour}) // jobs never run: the test parses
			s.ctx = context.Background()
			s.state = stateRunning
			s.client.encoding = enc
			text := strings.Replace(benchPrompt(120, 1), "# Big\n\n", "# Big\n\n```lua shared\nLIMIT = 3\nlocal function twice(x)\n  return 2 * x\nend\n```\n\n", 1)
			if crlf {
				text = strings.ReplaceAll(text, "\n", "\r\n")
			}
			uri := protocol.DocumentURI(fmt.Sprintf("file:///edited/%s-%v.md", enc, crlf))
			call := func(method string, params any) {
				raw, _ := json.Marshal(params)
				s.mu.Lock()
				defer s.mu.Unlock()
				if _, err := methods()[method].serve.fn(s, context.Background(), raw); err != nil {
					t.Fatal(err)
				}
			}
			call(protocol.MethodTextDocumentDidOpen, map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "markdown", "version": 1, "text": text}})
			d := s.docs[uriKey(uri)]
			texts := map[uint64]string{0: text} // by the document's edit count
			parsed, claims := 0, 0
			for step := range 400 {
				var changes []any
				was := text
				for range 1 + r.IntN(3) {
					if r.IntN(40) == 0 {
						// A whole new text: the same with a piece inserted.
						at := r.IntN(len(text) + 1)
						for at < len(text) && text[at]&0xC0 == 0x80 {
							at++
						}
						text = text[:at] + pieces[r.IntN(len(pieces))] + text[at:]
						changes = append(changes, map[string]any{"text": text})
						continue
					}
					lc := uint32(strings.Count(text, "\n") + strings.Count(text, "\r") - strings.Count(text, "\r\n") + 1)
					l1 := uint32(r.IntN(int(lc)))
					l2 := l1 + uint32(r.IntN(2))
					rg := rng(l1, uint32(r.IntN(12)), l2, uint32(r.IntN(12)))
					if l2 == l1 && rg.End.Character < rg.Start.Character {
						rg.Start, rg.End = rg.End, rg.Start
					}
					ins := ""
					if r.IntN(3) > 0 {
						ins = pieces[r.IntN(len(pieces))]
					}
					next, ok := refApply(text, rg, ins, enc)
					if !ok {
						continue // splits a character: the server refuses the whole notification
					}
					text = next
					changes = append(changes, map[string]any{"range": rg, "text": ins})
				}
				if len(changes) == 0 || !parse.DeclaresPromptforge([]byte(text)) {
					text = was // only prompts are parsed
					continue
				}
				call(protocol.MethodTextDocumentDidChange, map[string]any{
					"textDocument":   map[string]any{"uri": uri, "version": step + 2},
					"contentChanges": changes,
				})
				s.mu.Lock()
				if string(d.text) != text {
					s.mu.Unlock()
					t.Fatalf("%s crlf %v step %d: the server's text differs from the client's", enc, crlf, step)
				}
				texts[d.seq] = text
				if r.IntN(3) > 0 {
					s.mu.Unlock()
					continue // versions typed over before anything parsed them
				}
				pin := s.pinDoc(d)
				reuseSeq := d.reuseSeq
				s.mu.Unlock()
				if pin.change != nil {
					claims++
					old, now := texts[reuseSeq], string(pin.text)
					ch := *pin.change
					if ch.Before > min(len(old), len(now)) || ch.After > min(len(old), len(now)) ||
						old[:ch.Before] != now[:ch.Before] || old[len(old)-ch.After:] != now[len(now)-ch.After:] {
						t.Fatalf("%s crlf %v step %d: change %+v since edit %d is not true of the texts", enc, crlf, step, ch, reuseSeq)
					}
				}
				snap := s.ready(pin)
				if snap.prompt == nil {
					if parse.DeclaresPromptforge([]byte(text)) {
						t.Fatalf("%s crlf %v step %d: a prompt not parsed", enc, crlf, step)
					}
					continue // an edit took promptforge: out of the frontmatter
				}
				parsed++
				parse.ResetCache()
				if got, want := parseDump(t, snap.prompt), parseDump(t, parse.Parse(fileName(uri), []byte(text))); got != want {
					t.Fatalf("%s crlf %v step %d: the edited parse differs from Parse", enc, crlf, step)
				}
			}
			if parsed < 50 || claims < parsed-1 {
				t.Fatalf("%s crlf %v: %d versions parsed, %d of them told what changed", enc, crlf, parsed, claims)
			}
		}
	}
}
