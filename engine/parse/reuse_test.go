package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// dump renders everything a parse found (tree, chunks' sources and
// syntax trees, errors, frontmatter), for comparing two parses.
func dump(t *testing.T, p *Prompt) string {
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
	var visit func([]*Section)
	visit = func(ss []*Section) {
		for _, s := range ss {
			put([]any{s.Heading, s.Name, s.Level, s.Parent != nil, s.Content, s.Live, s.OffWalk, s.Marker, s.Dead, s.Blocks, s.Items, s.IsList})
			visit(s.Children)
		}
	}
	visit(p.Sections)
	return out.String()
}

// edits returns versions of src an editor could send next: a character
// typed, a line deleted, a line doubled, at random places.
func edits(r *rand.Rand, src []byte) [][]byte {
	if len(src) == 0 {
		return nil
	}
	var out [][]byte
	for range 3 {
		at := r.IntN(len(src) + 1)
		out = append(out, append(append(append([]byte{}, src[:at]...), 'x'), src[at:]...))
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	for range 2 {
		l := r.IntN(len(lines))
		del := bytes.Join(append(append([][]byte{}, lines[:l]...), lines[l+1:]...), nil)
		dup := bytes.Join(append(append(append([][]byte{}, lines[:l+1]...), lines[l]), lines[l+1:]...), nil)
		out = append(out, del, dup)
	}
	return out
}

// TestParseAfterMatchesParse: a parse that reuses its previous version's
// chunks and regions reads the same as a parse from nothing, whatever
// the edit between them.
func TestParseAfterMatchesParse(t *testing.T) {
	defer ResetCache()
	testdata, examples := sampleInputs(t)
	r := rand.New(rand.NewPCG(34, 1))
	n := 0
	for i, src := range append(testdata, examples...) {
		for j, next := range edits(r, src) {
			for _, crlf := range []bool{false, true} {
				a, b := src, next
				if crlf {
					a, b = bytes.ReplaceAll(a, []byte("\n"), []byte("\r\n")), bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
				}
				name := fmt.Sprintf("f%d.md", i)
				prev := Parse(name, a)
				got := dump(t, ParseAfter(prev.Reuse(), name, b))
				ResetCache()
				if want := dump(t, Parse(name, b)); got != want {
					t.Fatalf("input %d, edit %d (crlf %v): ParseAfter differs from Parse", i, j, crlf)
				}
				n++
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d edits tried", n)
	}
}

// TestParseAfterReuses: chunks and regions before and after an edit come
// from the previous version's parse, even when the caches no longer hold
// them; the edited chunk is compiled afresh.
func TestParseAfterReuses(t *testing.T) {
	defer ResetCache()
	var b bytes.Buffer
	b.WriteString("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n")
	for i := range 20 {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal x = %d\n```\n\nText %d.\n\n", i, i, i)
	}
	src := b.Bytes()
	prev := Parse("t.md", src)
	at := bytes.Index(src, []byte("local x = 10"))
	next := append(append(append([]byte{}, src[:at]...), "local xy = 10\n-- more"...), src[at+len("local x = 10"):]...)
	ResetCache()
	p := ParseAfter(prev.Reuse(), "t.md", next)
	for i, s := range p.Sections {
		c, was := s.Blocks[0].Chunk, prev.Sections[i].Blocks[0].Chunk
		if same := c.Key() == was.Key(); same != (i != 10) {
			t.Errorf("section %d: chunk reused %v", i, same)
		}
	}
	if got := len(p.reuse.regions); got != len(prev.reuse.regions) {
		t.Errorf("%d regions recorded, %d before", got, len(prev.reuse.regions))
	}
	reused := 0
	for i, s := range p.reuse.regions {
		if s == prev.reuse.regions[i] {
			reused++
		}
	}
	if reused != len(p.reuse.regions)-1 {
		t.Errorf("%d of %d regions reused, want all but the edited one", reused, len(p.reuse.regions))
	}
}
