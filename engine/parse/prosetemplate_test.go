package parse

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/template"
)

// freshTemplate is Prose.Template without the cache: a parse of the text
// with every span mapped to a file offset.
func freshTemplate(pr *Prose) (*template.Template, *template.Error) {
	t, err := template.Parse(pr.Text, 0)
	pr.toFileOffsets(t, err)
	return t, err
}

// normalized drops slice capacities, which may differ between a fresh
// parse and a copy of a cached one.
func normalized(t *template.Template) []template.Node {
	out := make([]template.Node, len(t.Nodes))
	for i, n := range t.Nodes {
		n.Segments = append([]template.Segment(nil), n.Segments...)
		out[i] = n
	}
	return out
}

var templateProse = []string{
	"Plain text, no placeholder.",
	"Say {{ var.x }} to {{args}}.\nThen {{ reply }}.",
	"Escaped \\{{ not }} one, {{ a.b.c }} and \\\\ too.",
	"Bad {{ var. }} and {{ item.x }} then {{ sys }}.",
	"Unclosed {{ var.x and more text\nover lines.",
	"{{a}}{{ b }}{{c.d}}",
	"Lines\nwith {{ x }}\nand\n{{ y.z }} at the end",
}

// TestProseTemplateCached: Template and TextTemplate give what a fresh
// parse gives, on a miss and on a hit, in LF and CRLF files and wherever
// the block sits; Template's result is the caller's own.
func TestProseTemplateCached(t *testing.T) {
	ResetCache()
	defer ResetCache()
	for _, crlf := range []bool{false, true} {
		for pad := range 3 {
			var b strings.Builder
			b.WriteString("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n")
			b.WriteString(strings.Repeat("Padding line.\n\n", pad))
			for i, text := range templateProse {
				fmt.Fprintf(&b, "## S%d\n\n%s\n\n", i, text)
			}
			src := b.String()
			if crlf {
				src = strings.ReplaceAll(src, "\n", "\r\n")
			}
			for round := range 2 { // a miss, then a hit
				p := Parse("t.md", []byte(src))
				for _, s := range p.Sections {
					for _, blk := range s.Blocks {
						if blk.Kind != ProseBlock {
							continue
						}
						pr := blk.Prose
						want, wantErr := freshTemplate(pr)
						got, gotErr := pr.Template()
						if !reflect.DeepEqual(normalized(got), normalized(want)) || !reflect.DeepEqual(gotErr, wantErr) {
							t.Fatalf("crlf=%v pad=%d round %d: Template(%q) =\n%+v %+v\nwant\n%+v %+v", crlf, pad, round, pr.Text, got, gotErr, want, wantErr)
						}
						rel, relErr := pr.TextTemplate()
						want, wantErr = template.Parse(pr.Text, 0)
						if !reflect.DeepEqual(normalized(rel), normalized(want)) || !reflect.DeepEqual(relErr, wantErr) {
							t.Fatalf("TextTemplate(%q) =\n%+v %+v\nwant\n%+v %+v", pr.Text, rel, relErr, want, wantErr)
						}
						// Changing Template's result changes neither the
						// cache nor a later result.
						for i := range got.Nodes {
							got.Nodes[i].Span.Start = -1
							for j := range got.Nodes[i].Segments {
								got.Nodes[i].Segments[j].Span.Start = -1
							}
						}
						if gotErr != nil {
							gotErr.Span.Start = -1
						}
						again, againErr := pr.Template()
						want, wantErr = freshTemplate(pr)
						if !reflect.DeepEqual(normalized(again), normalized(want)) || !reflect.DeepEqual(againErr, wantErr) {
							t.Fatalf("Template(%q) changed after a caller changed its result", pr.Text)
						}
					}
				}
			}
		}
	}
}

// TestTemplateCacheBounded: the prose template cache keeps at most two
// generations within its budget, serves recent texts, and owns every
// string it holds (no entry pins a parsed file's text).
func TestTemplateCacheBounded(t *testing.T) {
	ResetCache()
	defer ResetCache()
	big := strings.Repeat("Some {{ var.x }} text {{ args }}.\n", 2000)
	var last *template.Template
	for i := range 200 {
		pr := &Prose{Text: fmt.Sprintf("%s%d", big, i)}
		last, _ = pr.TextTemplate()
	}
	templates.mu.Lock()
	held := templates.curBytes
	for k := range templates.prev {
		held += templates.weigh(k)
	}
	n := len(templates.cur) + len(templates.prev)
	templates.mu.Unlock()
	if held > 2*templates.maxBytes || n >= 200 {
		t.Fatalf("cache holds %d weighed bytes in %d entries, budget 2 x %d", held, n, templates.maxBytes)
	}
	pr := &Prose{Text: fmt.Sprintf("%s%d", big, 199)}
	if got, _ := pr.TextTemplate(); got != last {
		t.Fatal("recent text not served from the cache")
	}

	text := []byte("# T\n\n## S\n\nSay \\{{ {{ var.x }} and {{ args }}.\n")
	p := Parse("t.md", text)
	tp, _ := p.Sections[0].Blocks[0].Prose.TextTemplate()
	start := uintptr(unsafe.Pointer(&text[0]))
	body := p.Sections[0].Blocks[0].Prose.Text
	bstart := uintptr(unsafe.Pointer(unsafe.StringData(body)))
	for _, nd := range tp.Nodes {
		strs := []string{nd.Text}
		for _, sg := range nd.Segments {
			strs = append(strs, sg.Name)
		}
		for _, s := range strs {
			if s == "" {
				continue
			}
			q := uintptr(unsafe.Pointer(unsafe.StringData(s)))
			if (q >= start && q < start+uintptr(len(text))) || (q >= bstart && q < bstart+uintptr(len(body))) {
				t.Fatalf("cached template string %q points into the parsed text", s)
			}
		}
	}
}
