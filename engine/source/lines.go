package source

import (
	"bytes"
	"slices"
)

// Lines indexes where the lines of an editor's copy of a document start,
// as an LSP client counts them: a line ends at LF, CRLF or a lone CR, and
// nothing is skipped (a leading U+FEFF is a character of line 0, not a
// byte order mark). It is what turns an edit's line:column into a byte
// offset in O(log lines + line length) instead of a scan of every line
// before it, and Edit keeps it current as the text changes, at the cost
// of the edit plus one pass over the line starts after it.
//
// Lines does not hold the text: every method that needs it takes the text
// the index was built for (or last updated to) by NewLines or Edit.
type Lines struct {
	// starts holds the offset where each line starts; starts[0] is 0.
	starts []int
	// size is the length of the indexed text.
	size int
	// shared is set when Starts gave starts away: Edit then works on a
	// copy.
	shared bool
}

// Starts returns the offset where each line starts. The caller may keep
// them: the index no longer writes to them (its next Edit copies them).
func (l *Lines) Starts() []int {
	l.shared = true
	return l.starts
}

// NewLines indexes text.
func NewLines(text []byte) *Lines {
	l := &Lines{size: len(text)}
	if bytes.IndexByte(text, '\r') < 0 {
		// The common case, LF only: one memchr per line.
		l.starts = append(make([]int, 0, bytes.Count(text, []byte{'\n'})+1), 0)
		for i := 0; ; {
			j := bytes.IndexByte(text[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			l.starts = append(l.starts, i)
		}
		return l
	}
	l.starts = append(l.starts, 0)
	for q := 1; q <= len(text); q++ {
		if startsLine(text, q) {
			l.starts = append(l.starts, q)
		}
	}
	return l
}

// LinesOf is the index of a text of size bytes whose lines start at
// starts (as NewLines or a File without a byte order mark has them). It
// shares starts without writing to them: its first Edit copies them.
func LinesOf(starts []int, size int) *Lines {
	return &Lines{starts: starts, size: size, shared: true}
}

// startsLine reports whether a line starts at offset q > 0 of text: the
// byte before it ends a line (an LF, or a CR not followed by an LF).
func startsLine(text []byte, q int) bool {
	switch text[q-1] {
	case '\n':
		return true
	case '\r':
		return q == len(text) || text[q] != '\n'
	}
	return false
}

// Count returns the number of lines (a final line break starts an empty
// last line).
func (l *Lines) Count() int { return len(l.starts) }

// Start returns the offset of the first byte of 0-based line n, which must
// be less than Count.
func (l *Lines) Start(n int) int { return l.starts[n] }

// End returns the offset just past the last character of 0-based line n
// (which must be less than Count) in text, before its line break.
func (l *Lines) End(text []byte, n int) int {
	if n+1 >= len(l.starts) {
		return l.size
	}
	end := l.starts[n+1] - 1 // the LF, or a lone CR
	if text[end] == '\n' && end > l.starts[n] && text[end-1] == '\r' {
		end--
	}
	return end
}

// Line returns the 0-based line holding offset off (clamped to the text).
func (l *Lines) Line(off int) int {
	off = max(0, min(off, l.size))
	i, found := slices.BinarySearch(l.starts, off)
	if found {
		return i
	}
	return i - 1
}

// Clone returns an independent copy of the index.
func (l *Lines) Clone() *Lines {
	return &Lines{starts: slices.Clone(l.starts), size: l.size}
}

// Edit updates the index in place for a replacement of the bytes
// [start, end) of the indexed text by n bytes; text is the text after the
// replacement. It rescans only the inserted bytes and the two positions
// around them (a CR and an LF can join or part there) and shifts the line
// starts after the edit.
func (l *Lines) Edit(text []byte, start, end, n int) {
	delta := n - (end - start)
	// Line starts before lo and after end are decided by bytes the edit
	// did not touch; those from lo to start+n (new offsets) are rescanned.
	lo := max(start, 1)
	i, _ := slices.BinarySearch(l.starts, lo)
	j, found := slices.BinarySearch(l.starts, end)
	if found {
		j++
	}
	var buf [4]int
	mid := buf[:0]
	if hi := min(start+n, len(text)); lo <= hi {
		seg := text[lo-1 : hi] // the bytes before each q in [lo, hi]
		if len(seg) > 64 {
			// A long replacement (a parse told what changed since its
			// last version): room for its line starts at once.
			mid = make([]int, 0, bytes.Count(seg, []byte{'\n'})+bytes.Count(seg, []byte{'\r'})+1)
		}
		if bytes.IndexByte(seg, '\r') < 0 {
			// No CR: the line starts follow the LFs, found by memchr.
			for p := lo - 1; ; {
				k := bytes.IndexByte(text[p:hi], '\n')
				if k < 0 {
					break
				}
				p += k + 1
				mid = append(mid, p)
			}
		} else {
			for q := lo; q <= hi; q++ {
				if startsLine(text, q) {
					mid = append(mid, q)
				}
			}
		}
	}
	tail := len(l.starts) - j
	size := i + len(mid) + tail
	if l.shared {
		l.starts, l.shared = append(make([]int, 0, size+16), l.starts...), false
	}
	if size > len(l.starts) {
		l.starts = slices.Grow(l.starts, size-len(l.starts))[:size]
	}
	copy(l.starts[i+len(mid):size], l.starts[j:j+tail])
	l.starts = l.starts[:size]
	if delta != 0 {
		for k := i + len(mid); k < size; k++ {
			l.starts[k] += delta
		}
	}
	copy(l.starts[i:], mid)
	l.size = len(text)
}
