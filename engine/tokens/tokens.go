// Package tokens estimates how many tokens a model round will send: a
// byte-pair-encoding token counter with the cl100k_base vocabulary
// embedded in the binary (github.com/pkoukk/tiktoken-go-loader's offline
// assets; nothing is downloaded), and the assembly of a round's lower
// bound from its parts (round.go).
//
// The vocabulary is parsed on first use, never at start-up, so commands
// that do not count tokens do not pay for it. Counting splits text the
// way cl100k_base's pre-tokenizer pattern does (a hand-written scanner,
// tested against tiktoken-go) and merges each piece with the ranks;
// pieces repeat a lot in prose, so their counts are memoised. The ranks
// are kept in a table without pointers (vocab.go, docs/architecture.md),
// which the garbage collector does not have to scan.
package tokens

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Encoding names the vocabulary counts are made with.
const Encoding = "cl100k_base"

var (
	ranksOnce sync.Once
	ranks     *vocab
	ranksErr  error

	// cache memoises piece counts; it is dropped whole when it grows past
	// maxCached entries.
	cacheMu sync.RWMutex
	cache   = map[string]int{}
)

const maxCached = 1 << 17

func load() (*vocab, error) {
	ranksOnce.Do(func() {
		ranks, ranksErr = loadVocab(Encoding + ".tiktoken")
	})
	return ranks, ranksErr
}

// Ready loads the vocabulary now (it is otherwise loaded by the first
// count) and reports whether it is usable.
func Ready() error {
	_, err := load()
	return err
}

// Count returns the number of cl100k_base tokens of text (special tokens
// are counted as ordinary text). When the embedded vocabulary cannot be
// read it falls back to a quarter of the byte length, rounded up.
func Count(text string) int {
	rk, err := load()
	if err != nil {
		return (len(text) + 3) / 4
	}
	// One read lock for the whole text; pieces not cached yet are merged
	// after it and stored under one write lock.
	n := 0
	var misses []string
	cacheMu.RLock()
	for i := 0; i < len(text); {
		j := nextPiece(text, i)
		piece := text[i:j]
		i = j
		if len(piece) == 1 {
			n++
			continue
		}
		if c, ok := cache[piece]; ok {
			n += c
			continue
		}
		misses = append(misses, piece)
	}
	cacheMu.RUnlock()
	if len(misses) == 0 {
		return n
	}
	counts := make([]int, len(misses))
	for k, piece := range misses {
		counts[k] = bpeCount(rk, piece)
		n += counts[k]
	}
	cacheMu.Lock()
	if len(cache)+len(misses) > maxCached {
		cache = map[string]int{}
	}
	for k, piece := range misses {
		// The key is copied so the cache never pins the caller's text.
		cache[string([]byte(piece))] = counts[k]
	}
	cacheMu.Unlock()
	return n
}

// bpeCount merges piece's bytes by rank, lowest first, and returns the
// number of parts left: the number of tokens.
func bpeCount(rk *vocab, piece string) int {
	if _, ok := rk.rank(piece); ok {
		return 1
	}
	// bounds[i] is the start of part i; parts end where the next starts.
	bounds := make([]int, len(piece)+1)
	for i := range bounds {
		bounds[i] = i
	}
	for len(bounds) > 2 {
		best, at := -1, -1
		for i := 0; i+2 < len(bounds); i++ {
			if r, ok := rk.rank(piece[bounds[i]:bounds[i+2]]); ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		bounds = append(bounds[:at+1], bounds[at+2:]...)
	}
	return len(bounds) - 1
}

// nextPiece returns the end of the pre-tokenizer piece starting at i. It
// follows cl100k_base's pattern, whose alternatives are tried in order:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3} |
//	 ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
func nextPiece(s string, i int) int {
	r, size := decode(s, i)
	// Contractions.
	if r == '\'' && i+1 < len(s) {
		for _, c := range [...]string{"s", "t", "re", "ve", "m", "ll", "d"} {
			if hasFoldPrefix(s[i+1:], c) {
				return i + 1 + len(c)
			}
		}
	}
	// Letters, optionally after one character that is not a line break,
	// letter or number.
	if isLetter(r) {
		return letters(s, i)
	}
	if r != '\r' && r != '\n' && !isNumber(r) && i+size < len(s) {
		if r2, _ := decode(s, i+size); isLetter(r2) {
			return letters(s, i+size)
		}
	}
	// One to three numbers.
	if isNumber(r) {
		j := i + size
		for k := 1; k < 3 && j < len(s); k++ {
			r2, sz := decode(s, j)
			if !isNumber(r2) {
				break
			}
			j += sz
		}
		return j
	}
	// Punctuation, optionally after one space, then line breaks.
	j := i
	if r == ' ' && i+1 < len(s) {
		if r2, _ := decode(s, i+1); isPunct(r2) {
			j = i + 1
		}
	}
	if r2, _ := decode(s, j); isPunct(r2) {
		for j < len(s) {
			r3, sz := decode(s, j)
			if !isPunct(r3) {
				break
			}
			j += sz
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// White space: up to its last line break if it has one; else all of
	// it at the end of the text, or all but its last character before
	// other text (that character then leads the next piece).
	end, lastNL := i, -1
	for end < len(s) {
		r3, sz := decode(s, end)
		if !isSpace(r3) {
			break
		}
		if r3 == '\r' || r3 == '\n' {
			lastNL = end + sz
		}
		end += sz
	}
	if end == i { // not reached for valid pieces; never loop forever
		return i + size
	}
	if lastNL >= 0 {
		return lastNL
	}
	if end == len(s) {
		return end
	}
	_, last := utf8.DecodeLastRuneInString(s[i:end])
	if end-last > i {
		return end - last
	}
	return end
}

func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func letters(s string, i int) int {
	for i < len(s) {
		r, sz := decode(s, i)
		if !isLetter(r) {
			break
		}
		i += sz
	}
	return i
}

func hasFoldPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for k := 0; k < len(lower); k++ {
		if s[k]|0x20 != lower[k] {
			return false
		}
	}
	return true
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return r|0x20 >= 'a' && r|0x20 <= 'z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.IsNumber(r)
}

// isSpace is the pattern's \s.
func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	if r < utf8.RuneSelf {
		return false
	}
	return unicode.IsSpace(r)
}

// isPunct is [^\s\p{L}\p{N}].
func isPunct(r rune) bool { return !isSpace(r) && !isLetter(r) && !isNumber(r) }
