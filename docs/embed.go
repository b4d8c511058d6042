package docs

import _ "embed" // the documents served by `forge-lsp mcp`'s lookup_docs

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
