package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/source"
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
	blocks := func(bs []*Block) {
		for _, b := range bs {
			if b.Kind == LuaBlock {
				// Whether it compiled, and how its AST's lines map.
				put([]any{b.Chunk.Key() != nil, b.Chunk.StmtLines()})
				continue
			}
			// Where its text maps in the file (CRLF-safe), and its
			// placeholders' file spans.
			pr := b.Prose
			var offs []int
			for i := 0; i <= len(pr.Text); i++ {
				offs = append(offs, pr.FileOffset(i))
			}
			tm, err := pr.Template()
			put([]any{offs, tm, err})
		}
	}
	blocks(p.H1Blocks)
	if p.Shared != nil {
		blocks([]*Block{{Kind: LuaBlock, Chunk: p.Shared}})
	}
	var visit func(parent *Section, ss []*Section)
	visit = func(parent *Section, ss []*Section) {
		for _, s := range ss {
			if s.Parent != parent || s.Heading == nil {
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
	for i, src := range append(append(testdata, examples...), reuseSample) {
		for j, next := range append(edits(r, src), substitutions(r, src)...) {
			for _, crlf := range []bool{false, true} {
				a, b := src, next
				if crlf {
					a, b = bytes.ReplaceAll(a, []byte("\n"), []byte("\r\n")), bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
				}
				name := fmt.Sprintf("f%d.md", i)
				ResetCache()
				fresh := Parse(name, b)
				want := dump(t, fresh)
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
					p := parse(prev.Reuse())
					if got := dump(t, p); got != want {
						t.Fatalf("input %d, edit %d (crlf %v), way %d (change %+v of %d -> %d bytes): differs from Parse", i, j, crlf, k, exact, len(a), len(b))
					}
					// What it leaves the next version's parse is a fresh
					// parse's too.
					if got, want := reuseDump(p.reuse), reuseDump(fresh.reuse); got != want {
						t.Fatalf("input %d, edit %d (crlf %v), way %d (change %+v of %d -> %d bytes): leaves %s to reuse, Parse %s", i, j, crlf, k, exact, len(a), len(b), got, want)
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

// reuseSample has what a section's processing depends on (thematic
// breaks, off-walk markers, dead text, list sections, placeholders,
// fences, Lua errors, nesting past MaxNesting, setext headings) in
// several sections of a few lines each, so that random edits fall before,
// in and after each.
var reuseSample = []byte("---\nname: r\ndescription: d\npromptforge: 1\n---\n# R\n\nIntro {{ var.a }}.\n\n" +
	"## A\n\n```lua\nlocal a = 1\n```\n\nSay {{ var.b }} now.\n\n---\n\ndead text\n" +
	"## L\n\n- one\n- two\n" +
	"## O\n\n---\n\n```lua\nx = 1\n```\n\nmiddle\n\n```lua\ny = 2\n```\n\n***\n\ngone\n" +
	"### Child\n\ntext\n\n" + strings.Repeat("> ", 70) + "deep\n\n" +
	"## Bad\n\n```lua\nlocal = \n```\n\n" +
	"Setext\n------\n\n```lua\nz = 3\n```\nend {{ var.c }}\n" +
	"## Empty\n" +
	"## L2\n\n1. first\n2. \n")

// reuseDump renders what a parse leaves the next version's parse by
// position (Reuse), with the chunks and sections as their offsets.
func reuseDump(r *Reuse) string {
	if r == nil {
		return "nil"
	}
	return fmt.Sprint(r.size, r.bodySize, r.bodyStart, r.chunkAt, r.lines, r.breaks, r.luaOpen, r.secAt, r.cuts, r.cutsOK, r.deep, r.starts)
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
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal x = %d\n```\n\nText %d {{ var.t }}.\n\n", i, i, i)
	}
	src := b.Bytes()
	at := bytes.Index(src, []byte("local x = 10"))
	next := append(append(append([]byte{}, src[:at]...), "local xy = 10\n-- more"...), src[at+len("local x = 10"):]...)
	for _, edited := range []bool{false, true} {
		ResetCache()
		prev := Parse("t.md", src)
		for _, s := range prev.Sections {
			s.Blocks[1].Prose.TextTemplate() // kept on the block
		}
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
			// The sections the edit left alone are copied from prev's
			// (with the placeholders their prose found) when the parse
			// knows what changed.
			if copied := s.Blocks[1].Prose.tmpl.Load() != nil; copied != (edited && i != 10) {
				t.Errorf("edited %v: section %d: copied %v", edited, i, copied)
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

// TestParseEditedNesting: a line an edit nests past MaxNesting is
// reported when only the edited lines are scanned for nesting, and one
// the edit unnests is not.
func TestParseEditedNesting(t *testing.T) {
	defer ResetCache()
	line := strings.Repeat(">", MaxNesting) + " deep\n"
	src := []byte("---\nname: n\ndescription: d\npromptforge: 1\n---\n# N\n\n## A\n\ntext\n\n" + line + "\nafter\n## B\n\nmore\n")
	at := bytes.Index(src, []byte(line)) + MaxNesting/2
	deeper := append(append(append([]byte{}, src[:at]...), '>'), src[at:]...)
	for _, v := range [][2][]byte{{src, deeper}, {deeper, src}} {
		a, b := v[0], v[1]
		want := dump(t, Parse("n.md", b))
		if p := Parse("n.md", deeper); len(p.Errors) != 1 {
			t.Fatalf("%d errors for a line %d deep, want 1", len(p.Errors), MaxNesting+1)
		}
		prev := Parse("n.md", a)
		if got := dump(t, ParseEdited(prev.Reuse(), common(a, b), "n.md", b)); got != want {
			t.Errorf("from %d to %d bytes: ParseEdited differs from Parse:\n%s\nwant\n%s", len(a), len(b), got, want)
		}
	}
}

// TestSameOffsets: offsets in a range match another range's only when
// both hold the same ones at the same distances from their starts.
func TestSameOffsets(t *testing.T) {
	for _, c := range []struct {
		now     []int
		a, b    int
		was     []int
		o       int
		want    bool
		comment string
	}{
		{nil, 0, 10, nil, 5, true, "none in either"},
		{[]int{1, 12}, 2, 10, []int{19, 30}, 20, true, "none in range"},
		{[]int{3, 5, 12}, 2, 10, []int{21, 23}, 20, true, "moved by 18"},
		{[]int{3, 5}, 2, 10, []int{21}, 20, false, "one fewer before"},
		{[]int{3}, 2, 10, []int{21, 23}, 20, false, "one more before"},
		{[]int{3}, 2, 10, []int{21, 27}, 20, false, "one more before, at the end"},
		{[]int{3}, 2, 10, []int{21, 28}, 20, true, "the next outside the range"},
		{[]int{3}, 2, 10, []int{22}, 20, false, "a different distance"},
	} {
		if got := sameOffsets(c.now, c.a, c.b, c.was, c.o); got != c.want {
			t.Errorf("%s: sameOffsets(%v, %d, %d, %v, %d) = %v", c.comment, c.now, c.a, c.b, c.was, c.o, got)
		}
	}
}

// TestUnmovedBlocksShared: ParseEdited takes the Lua blocks of the
// sections an edit left at their place (before it, or after an edit of
// the same length and lines) from the previous parse as they are, and
// copies those it moved; the parse is Parse's either way.
func TestUnmovedBlocksShared(t *testing.T) {
	defer ResetCache()
	var b bytes.Buffer
	b.WriteString("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n")
	for i := range 20 {
		fmt.Fprintf(&b, "## S%d\n\n```lua\nlocal x = %d\n```\n\nText %d {{ var.t }}.\n\n", i, i, i)
	}
	src := b.Bytes()
	at := bytes.Index(src, []byte("local x = 10"))
	for _, c := range []struct {
		name, repl  string
		sharedAfter bool
	}{
		{"longer", "local xy = 10\n-- more", false},
		{"same length", "local x = 99", true},
	} {
		next := append(append(append([]byte{}, src[:at]...), c.repl...), src[at+len("local x = 10"):]...)
		prev := Parse("t.md", src)
		p := ParseEdited(prev.Reuse(), common(src, next), "t.md", next)
		if got, want := dump(t, p), dump(t, Parse("t.md", next)); got != want {
			t.Errorf("%s: ParseEdited differs from Parse:\n%s\nwant\n%s", c.name, got, want)
		}
		for i, s := range p.Sections {
			shared := s.Blocks[0] == prev.Sections[i].Blocks[0]
			if want := i < 10 || i > 10 && c.sharedAfter; shared != want {
				t.Errorf("%s: section %d: Lua block shared %v, want %v", c.name, i, shared, want)
			}
			if s.Blocks[1] == prev.Sections[i].Blocks[1] {
				t.Errorf("%s: section %d: prose block shared (it would pin the previous text)", c.name, i)
			}
		}
	}
}

// TestEditedFileLines: the line starts ParseEdited moves from the
// previous version's are those of a scan of the new text, across CRs
// and LFs that an edit joins or parts, with the Change exact or less
// (not only once source.NewFileLines has checked their number).
func TestEditedFileLines(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 34))
	pieces := []string{"x", "\n", "\r", "\r\n", "ab\ncd", ""}
	for range 3000 {
		var b []byte
		for range r.IntN(12) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		at := r.IntN(len(b) + 1)
		del := r.IntN(len(b) - at + 1)
		next := append(append(append([]byte{}, b[:at]...), pieces[r.IntN(len(pieces))]...), b[at+del:]...)
		prev := &Reuse{size: len(b), starts: source.NewFile("a", b).LineStarts()}
		exact := common(b, next)
		for _, ch := range []Change{exact, {Before: r.IntN(exact.Before + 1), After: r.IntN(exact.After + 1)}} {
			got := editedStarts(prev, ch, next)
			if want := source.NewLines(next).Starts(); !slices.Equal(got, want) {
				t.Fatalf("%q -> %q (change %+v): line starts %v, want %v", b, next, ch, got, want)
			}
		}
	}
}
