// Package source holds a prompt file's text and converts between the
// coordinate systems the tools use: absolute byte offsets (the only
// coordinates stored in trees and diagnostics), 1-based line/byte-column
// pairs for the CLI, and 0-based line/UTF-16 column pairs for LSP.
//
// Lines are separated by LF; a CR directly before an LF belongs to the line
// break. A leading UTF-8 BOM is not part of line 1's columns.
package source

import (
	"bytes"
	"sort"
	"sync"
	"unicode/utf8"
)

// Span is a half-open byte range [Start, End) into a File's content.
type Span struct {
	Start, End int
}

// Len returns the number of bytes the span covers.
func (s Span) Len() int { return s.End - s.Start }

// Contains reports whether off lies inside the span (End inclusive, so a
// cursor at the end of a word still hits it).
func (s Span) Contains(off int) bool { return off >= s.Start && off <= s.End }

// IsValid reports whether the span is well formed.
func (s Span) IsValid() bool { return s.Start >= 0 && s.End >= s.Start }

// File is an immutable prompt file.
type File struct {
	Name    string
	Content []byte
	// enc and bomIsText are how LSP positions count (UseLSPEncoding).
	enc       Encoding
	bomIsText bool
	// lines holds the byte offset where each line starts; lines[0] is 0, or
	// 3 when the file starts with a BOM.
	lines []int

	// checkpoints is built on first use by utf16Between.
	checkOnce   sync.Once
	checkpoints map[int]*checkpoints
}

// checkpoints are rune boundaries of one long line, at least checkEvery
// bytes apart, with the UTF-16 length of the line up to each, decoded from
// the line's start exactly as utf16Len decodes.
type checkpoints struct {
	at, units []int
}

// longLine is the length from which a line gets checkpoints; a shorter
// line is walked.
const (
	longLine   = 1024
	checkEvery = 256
)

// BOM is the UTF-8 byte order mark.
const BOM = "\uFEFF"

// NewFile indexes content. The slice is kept, not copied, unless it holds
// a lone CR: a CR not followed by LF ends a line too (old Mac files, and
// LSP clients count it), so such a file is read from a copy in which each
// lone CR is an LF. The copy has the same length: offsets into it are
// offsets into content.
func NewFile(name string, content []byte) *File {
	content = NormalizeCR(content)
	f := &File{Name: name, Content: content}
	start := 0
	if len(content) >= 3 && string(content[:3]) == BOM {
		start = 3
	}
	f.lines = append(make([]int, 0, bytes.Count(content[start:], []byte{'\n'})+1), start)
	for i := start; ; {
		j := bytes.IndexByte(content[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		f.lines = append(f.lines, i)
	}
	return f
}

// NewFileLines is NewFile for content whose line starts are known:
// starts as Lines (Lines.Starts) has them for the same text, which are
// NewFile's for a file without a byte order mark (a lone CR, a CRLF and
// an LF end a line in both). The file keeps starts, which must not change
// afterwards; it makes its own for a file with a BOM, or when starts
// cannot be the text's (their number is not its lines').
func NewFileLines(name string, content []byte, starts []int) *File {
	if len(starts) == 0 || starts[0] != 0 || len(content) >= 3 && string(content[:3]) == BOM {
		return NewFile(name, content)
	}
	content = NormalizeCR(content)
	if bytes.Count(content, []byte{'\n'})+1 != len(starts) {
		return NewFile(name, content)
	}
	return &File{Name: name, Content: content, lines: starts}
}

// HasBOM reports whether the file starts with a UTF-8 BOM.
func (f *File) HasBOM() bool { return f.lines[0] == 3 }

// LineCount returns the number of lines (a final LF starts an empty last line).
func (f *File) LineCount() int { return len(f.lines) }

// LineStart returns the offset of the first byte of 1-based line n, clamped
// to the file.
func (f *File) LineStart(n int) int {
	if n < 1 {
		return f.lines[0]
	}
	if n > len(f.lines) {
		return len(f.Content)
	}
	return f.lines[n-1]
}

// LineEnd returns the offset of the end of 1-based line n, excluding its
// line break (LF or CRLF).
func (f *File) LineEnd(n int) int {
	if n < 1 {
		n = 1
	}
	if n >= len(f.lines) { // the last line (or past it) ends at the file's end
		return len(f.Content)
	}
	end := f.lines[n] - 1 // the LF
	if end > f.lines[n-1] && f.Content[end-1] == '\r' {
		end--
	}
	return end
}

// Line returns the 1-based line containing off (line 1 for an offset
// inside a leading BOM).
func (f *File) Line(off int) int {
	off = f.clamp(off)
	// The first line starting after off (sort.Search, written out: this
	// runs for every span a diagnostic or a tree node converts).
	lo, hi := 0, len(f.lines)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f.lines[m] > off {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return max(lo, 1) // an offset inside a leading BOM is on line 1
}

// LineStarts returns the offset where each line starts (element k is
// line k+1's). The slice is the file's own: do not modify it.
func (f *File) LineStarts() []int { return f.lines }

func (f *File) clamp(off int) int {
	if off < 0 {
		return 0
	}
	if off > len(f.Content) {
		return len(f.Content)
	}
	return off
}

// Position converts an offset to a 1-based line and 1-based byte column.
func (f *File) Position(off int) (line, col int) {
	off = f.clamp(off)
	line = f.Line(off)
	start := f.lines[line-1]
	if off < start { // inside the BOM
		return line, 1
	}
	return line, off - start + 1
}

// Offset converts a 1-based line and byte column back to an offset,
// clamping to the line.
func (f *File) Offset(line, col int) int {
	start := f.LineStart(line)
	end := f.LineEnd(line)
	off := start + col - 1
	if off < start {
		return start
	}
	if off > end {
		return end
	}
	return off
}

// UseLSPEncoding makes the file's LSP positions count columns in enc (the
// position encoding the client and server agreed on). With clientText set
// the file is an LSP client's copy of a document, and a leading U+FEFF is a
// character of line 0, as it is in the client's text, not a byte order mark
// to skip (the engine still reads it as a BOM, as it will once the text is
// saved). Call it before the file is shared.
func (f *File) UseLSPEncoding(enc Encoding, clientText bool) {
	f.enc, f.bomIsText = enc, clientText
}

// Encoding is the position encoding of the file's LSP positions (UTF16
// unless UseLSPEncoding chose another).
func (f *File) Encoding() Encoding { return f.enc }

// LSPLineStart is the offset at which LSP columns of 1-based line n start:
// LineStart, except that line 1 of a client's document starts at 0, a
// leading U+FEFF included.
func (f *File) LSPLineStart(n int) int {
	if n <= 1 && f.bomIsText {
		return 0
	}
	return f.LineStart(n)
}

// LSPPosition converts an offset to a 0-based line and a column in the
// file's position encoding (UTF-16 code units by default).
func (f *File) LSPPosition(off int) (line, char uint32) {
	off = f.clamp(off)
	l := f.Line(off)
	start := f.LSPLineStart(l)
	if off < start {
		return uint32(l - 1), 0
	}
	switch f.enc {
	case UTF8:
		return uint32(l - 1), uint32(off - start)
	case UTF32:
		return uint32(l - 1), uint32(utf8.RuneCount(f.Content[start:off]))
	}
	return uint32(l - 1), uint32(f.utf16Between(start, off))
}

// LSPOffset converts a 0-based line and a column in the file's position
// encoding to an offset. Columns past the end of the line clamp to its
// end; a column inside a character (a surrogate pair, a UTF-8 sequence)
// rounds down to the character's start.
func (f *File) LSPOffset(line, char uint32) int {
	if int(line) >= len(f.lines) {
		return len(f.Content)
	}
	start := f.LSPLineStart(int(line) + 1)
	end := f.LineEnd(int(line) + 1)
	return start + f.enc.Prefix(f.Content[start:end], char)
}

// utf16Between returns utf16Len(Content[start:off]) for a line start,
// walking at most about checkEvery bytes: on one long line (a minified
// chunk of megabytes) a walk from the line start per position made every
// feature that converts many positions quadratic.
func (f *File) utf16Between(start, off int) int {
	if off-start < longLine {
		return utf16Len(f.Content[start:off])
	}
	f.checkOnce.Do(f.indexLongLines)
	cp := f.checkpoints[start]
	if cp == nil {
		return utf16Len(f.Content[start:off])
	}
	k := sort.SearchInts(cp.at, off+1) - 1 // the last checkpoint <= off
	if k < 0 {
		return utf16Len(f.Content[start:off])
	}
	return cp.units[k] + utf16Len(f.Content[cp.at[k]:off])
}

// indexLongLines builds the checkpoints of every line of at least
// longLine bytes (about 6% of their length in memory).
func (f *File) indexLongLines() {
	for l, start := range f.lines {
		end := len(f.Content)
		if l+1 < len(f.lines) {
			end = f.lines[l+1]
		}
		if end-start < longLine {
			continue
		}
		cp := &checkpoints{}
		units, last := 0, start
		for i := start; i < end; {
			if i-last >= checkEvery {
				cp.at = append(cp.at, i)
				cp.units = append(cp.units, units)
				last = i
			}
			r, size := utf8.DecodeRune(f.Content[i:end])
			if r >= 0x10000 && r != utf8.RuneError {
				units += 2
			} else {
				units++
			}
			i += size
		}
		if f.checkpoints == nil {
			f.checkpoints = map[int]*checkpoints{}
		}
		f.checkpoints[start] = cp
	}
}

// Encoding is how LSP positions count the characters of a line (LSP 3.17
// PositionEncodingKind): UTF-16 code units unless client and server agree
// on another.
type Encoding uint8

// The position encodings.
const (
	UTF16 Encoding = iota
	UTF8
	UTF32
)

// String is the encoding's LSP name: "utf-16", "utf-8" or "utf-32".
func (e Encoding) String() string {
	switch e {
	case UTF8:
		return "utf-8"
	case UTF32:
		return "utf-32"
	}
	return "utf-16"
}

// ParseEncoding reads an LSP PositionEncodingKind.
func ParseEncoding(s string) (Encoding, bool) {
	switch s {
	case "utf-16":
		return UTF16, true
	case "utf-8":
		return UTF8, true
	case "utf-32":
		return UTF32, true
	}
	return UTF16, false
}

// Count is the length of b in the encoding's units.
func (e Encoding) Count(b []byte) int {
	switch e {
	case UTF8:
		return len(b)
	case UTF32:
		return utf8.RuneCount(b)
	}
	return utf16Len(b)
}

// Prefix is the length in bytes of the longest prefix of line (one line,
// without its break) that is at most n units long and ends at a character
// boundary.
func (e Encoding) Prefix(line []byte, n uint32) int {
	if e == UTF8 {
		i := min(int(n), len(line))
		for i > 0 && i < len(line) && !utf8.RuneStart(line[i]) {
			i--
		}
		return i
	}
	units := uint32(0)
	i := 0
	for i < len(line) {
		r, size := utf8.DecodeRune(line[i:])
		w := uint32(1)
		if e == UTF16 && r >= 0x10000 && r != utf8.RuneError {
			w = 2
		}
		if units+w > n {
			break
		}
		units += w
		i += size
	}
	return i
}

func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r >= 0x10000 && r != utf8.RuneError {
			n += 2
		} else {
			n++
		}
		b = b[size:]
	}
	return n
}

// Text returns the bytes a span covers as a string, clamped to the file.
func (f *File) Text(s Span) string {
	a, b := f.clamp(s.Start), f.clamp(s.End)
	if b < a {
		return ""
	}
	return string(f.Content[a:b])
}

// NormalizeCR returns content with every lone CR replaced by LF (a copy
// of the same length), or content itself when it has none.
func NormalizeCR(content []byte) []byte {
	lone := func(i int) bool { return content[i] == '\r' && (i+1 == len(content) || content[i+1] != '\n') }
	i := bytes.IndexByte(content, '\r')
	for i >= 0 && !lone(i) {
		j := bytes.IndexByte(content[i+1:], '\r')
		if j < 0 {
			return content
		}
		i += 1 + j
	}
	if i < 0 {
		return content
	}
	out := bytes.Clone(content)
	for ; i < len(out); i++ {
		if out[i] == '\r' && (i+1 == len(out) || out[i+1] != '\n') {
			out[i] = '\n'
		}
	}
	return out
}
