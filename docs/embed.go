package docs

import (
	_ "embed" // the documents served by `forge-lsp mcp`'s lookup_docs
	"regexp"
	"strings"
	"sync"
)

// Codes is docs/codes.md: every diagnostic code with a bad and a fixed
// example.
//
//go:embed codes.md
var Codes string

// Language is docs/language.md, the language reference (its frontmatter
// key table answers lookup_docs for a frontmatter key).
//
//go:embed language.md
var Language string

// FrontmatterKey is one row of language.md's frontmatter key table.
type FrontmatterKey struct {
	// Name is the key; Required, Value and Meaning are its columns
	// (Meaning in Markdown, its links relative to language.md).
	Name, Required, Value, Meaning string
}

// FrontmatterKeys is language.md's table under "### Frontmatter keys", in
// its order: the one description of each key that hover, completion and
// `forge-lsp mcp`'s lookup_docs show.
var FrontmatterKeys = sync.OnceValue(func() []FrontmatterKey {
	var out []FrontmatterKey
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]*) \\| ([^|]*) \\| ([^|]*) \\|$")
	i := strings.Index(Language, "### Frontmatter keys")
	if i < 0 {
		return nil
	}
	for _, l := range strings.Split(Language[i:], "\n")[1:] {
		if strings.HasPrefix(l, "#") {
			break
		}
		if m := row.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			out = append(out, FrontmatterKey{Name: m[1], Required: strings.TrimSpace(m[2]), Value: strings.TrimSpace(m[3]), Meaning: strings.TrimSpace(m[4])})
		}
	}
	return out
})
