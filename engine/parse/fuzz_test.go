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

// FuzzParseEdited: a parse of an edited prompt that reuses the previous
// version's parse, told exactly which bytes the edit changed
// (ParseEdited), reads the same as Parse, and leaves the same to reuse.
func FuzzParseEdited(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add(c.prompt, uint16(len(c.prompt)/2), uint8(1), []byte("x"))
	}
	f.Add(reuseSample, uint16(200), uint8(0), []byte("\n## New\n"))
	f.Fuzz(func(t *testing.T, data []byte, at uint16, del uint8, ins []byte) {
		a := int(at) % (len(data) + 1)
		d := min(int(del)%16, len(data)-a)
		next := append(append(append([]byte{}, data[:a]...), ins...), data[a+d:]...)
		defer ResetCache()
		ResetCache()
		prev := Parse("f.md", data)
		ResetCache() // what is reused comes from prev, not the caches
		p := ParseEdited(prev.Reuse(), common(data, next), "f.md", next)
		got, gotReuse := dump(t, p), reuseDump(p.reuse)
		ResetCache()
		fresh := Parse("f.md", next)
		if want := dump(t, fresh); got != want {
			t.Fatalf("ParseEdited differs from Parse:\n%s\nwant\n%s", got, want)
		}
		if want := reuseDump(fresh.reuse); gotReuse != want {
			t.Fatalf("ParseEdited leaves %s to reuse, Parse %s", gotReuse, want)
		}
	})
}
