package parse

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"
)

// TestParseEditedKeepsNoOlderVersion: a parse made with ParseEdited from
// the previous version's Reuse keeps nothing of the versions before it
// reachable: an editor parses every keystroke's version from the one
// before, and the analyses memoise a whole program on each Prompt.
func TestParseEditedKeepsNoOlderVersion(t *testing.T) {
	ResetCache()
	t.Cleanup(ResetCache)
	version := func(n int) []byte {
		var b strings.Builder
		b.WriteString("---\nname: r\ndescription: d\npromptforge: 1\n---\n\n# R\n\nShared text.\n\n")
		for i := range 8 {
			v := 10
			if i == 4 {
				v = 10 + n%80
			}
			fmt.Fprintf(&b, "## S%d\n\nText of %d.\n\n```lua\nlocal x = %d\nvar.k%d = x\n```\n\nMore {{ var.k%d }}.\n\n", i, i, v, i, i)
		}
		return []byte(b.String())
	}
	// change is what an edit of section 4's number left alone.
	change := func(old, cur []byte) Change {
		ch := Change{}
		for ch.Before < min(len(old), len(cur)) && old[ch.Before] == cur[ch.Before] {
			ch.Before++
		}
		for ch.After < min(len(old), len(cur))-ch.Before && old[len(old)-1-ch.After] == cur[len(cur)-1-ch.After] {
			ch.After++
		}
		return ch
	}
	src := version(0)
	p := Parse("r.md", src)
	first := weak.Make(p)
	for n := 1; n <= 6; n++ {
		next := version(n)
		p = ParseEdited(p.Reuse(), change(src, next), "r.md", next)
		src = next
	}
	for _, s := range p.Sections {
		for _, b := range s.Blocks {
			if b.Prose != nil {
				b.Prose.FileOffset(0) // the prose blocks are in use
			}
		}
	}
	runtime.GC()
	if first.Value() != nil {
		t.Fatal("the first version's parse is still reachable from the sixth's")
	}
	runtime.KeepAlive(p)
}
