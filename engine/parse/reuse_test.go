package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
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

// substitutions returns versions of src of the same length: a byte
// replaced, a line's text turned around, a byte swapped with the line
// break after it. A parse that took a same-length text for the old one
// without comparing them would read the old one.
func substitutions(r *rand.Rand, src []byte) [][]byte {
	if len(src) == 0 {
		return nil
	}
	var out [][]byte
	for _, c := range []byte("y#`\n-") {
		b := bytes.Clone(src)
		b[r.IntN(len(b))] = c
		out = append(out, b)
	}
	b := bytes.Clone(src)
	at := r.IntN(len(b))
	end := at + bytes.IndexByte(b[at:], '\n')
	if end < at {
		end = len(b)
	}
	slices.Reverse(b[at:end])
	out = append(out, b)
	for range 3 { // a line break made a blank: two lines joined
		b := bytes.Clone(src)
		from := r.IntN(len(b))
		if i := bytes.IndexByte(b[from:], '\n'); i >= 0 {
			b[from+i] = ' '
		}
		out = append(out, b)
	}
	if i := bytes.IndexByte(src[at:], '\n'); i > 0 {
		b := bytes.Clone(src)
		b[at+i-1], b[at+i] = b[at+i], b[at+i-1]
		out = append(out, b)
	}
	return out
}

// common returns the longest Change true of a and b: their common
// prefix, and their common suffix in what is left.
func common(a, b []byte) Change {
	n := min(len(a), len(b))
	p := 0
	for p < n && a[p] == b[p] {
		p++
	}
	q := 0
	for q < n-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	return Change{Before: p, After: q}
}

// TestParseAfterMatchesParse: a parse that reuses its previous version's
// chunks and regions reads the same as a parse from nothing, whatever
// the edit between them; so does one told which bytes the edit changed
// (ParseEdited), told exactly or less than that, in LF and CRLF files.
func TestParseAfterMatchesParse(t *testing.T) {
	defer ResetCache()
	testdata, examples := sampleInputs(t)
	r := rand.New(rand.NewPCG(34, 1))
	n := 0
	for i, src := range append(testdata, examples...) {
		for j, next := range append(edits(r, src), substitutions(r, src)...) {
			for _, crlf := range []bool{false, true} {
				a, b := src, next
				if crlf {
					a, b = bytes.ReplaceAll(a, []byte("\n"), []byte("\r\n")), bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
				}
				name := fmt.Sprintf("f%d.md", i)
				ResetCache()
				want := dump(t, Parse(name, b))
				exact := common(a, b)
				less := Change{Before: r.IntN(exact.Before + 1), After: r.IntN(exact.After + 1)}
				for k, parse := range []func(*Reuse) *Prompt{
					func(prev *Reuse) *Prompt { return ParseAfter(prev, name, b) },
					func(prev *Reuse) *Prompt { return ParseEdited(prev, exact, name, b) },
					func(prev *Reuse) *Prompt { return ParseEdited(prev, less, name, b) },
				} {
					ResetCache()
					prev := Parse(name, a)
					ResetCache() // what is reused comes from prev, not the caches
					if got := dump(t, parse(prev.Reuse())); got != want {
						t.Fatalf("input %d, edit %d (crlf %v), way %d (change %+v of %d -> %d bytes): differs from Parse", i, j, crlf, k, exact, len(a), len(b))
					}
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
// them; the edited chunk is compiled afresh. So they do when the parse is
// told what the edit changed (ParseEdited).
func TestParseAfterReuses(t *testing.T) {
	defer ResetCache()
	var b bytes.Buffer
	b.WriteString("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n")
	for i := range 20 {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal x = %d\n```\n\nText %d.\n\n", i, i, i)
	}
	src := b.Bytes()
	at := bytes.Index(src, []byte("local x = 10"))
	next := append(append(append([]byte{}, src[:at]...), "local xy = 10\n-- more"...), src[at+len("local x = 10"):]...)
	for _, edited := range []bool{false, true} {
		ResetCache()
		prev := Parse("t.md", src)
		ResetCache()
		var p *Prompt
		if edited {
			p = ParseEdited(prev.Reuse(), common(src, next), "t.md", next)
		} else {
			p = ParseAfter(prev.Reuse(), "t.md", next)
		}
		for i, s := range p.Sections {
			c, was := s.Blocks[0].Chunk, prev.Sections[i].Blocks[0].Chunk
			if same := c.Key() == was.Key(); same != (i != 10) {
				t.Errorf("edited %v: section %d: chunk reused %v", edited, i, same)
			}
		}
		if got := len(p.reuse.regions); got != len(prev.reuse.regions) {
			t.Errorf("edited %v: %d regions recorded, %d before", edited, got, len(prev.reuse.regions))
		}
		reused := 0
		for i, s := range p.reuse.regions {
			if s == prev.reuse.regions[i] {
				reused++
			}
		}
		if reused != len(p.reuse.regions)-1 {
			t.Errorf("edited %v: %d of %d regions reused, want all but the edited one", edited, reused, len(p.reuse.regions))
		}
	}
}

// TestAtHint: at finds the same index with any hint as without one, and
// leaves the hint after what it found.
func TestAtHint(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var offs []int
		for o := r.IntN(4); len(offs) < r.IntN(12); o += 1 + r.IntN(3) {
			offs = append(offs, o)
		}
		for o := -1; o < 40; o++ {
			want := slices.Index(offs, o)
			for h := -1; h <= len(offs)+1; h++ {
				hint := h
				if got := at(offs, o, &hint); got != want {
					t.Fatalf("at(%v, %d, hint %d) = %d, want %d", offs, o, h, got, want)
				}
				if want >= 0 && hint != want+1 {
					t.Fatalf("at(%v, %d, hint %d) left the hint at %d, want %d", offs, o, h, hint, want+1)
				}
			}
		}
	}
}
