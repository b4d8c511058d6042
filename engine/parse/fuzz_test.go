package parse

import (
	"testing"
	"unicode/utf8"
)

// FuzzParse: the parser never panics, every span lies inside the file and
// every error has a span, a code and a message.
func FuzzParse(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add(c.prompt)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parse("fuzz.md", data)
		checkInvariants(t, p)
		// Conversions to LSP positions never fail either.
		for _, e := range p.Errors {
			l, c := p.File.LSPPosition(e.Span.Start)
			if back := p.File.LSPOffset(l, c); back > len(data) {
				t.Fatalf("LSPOffset out of range")
			}
		}
		_ = utf8.Valid(data)
	})
}
