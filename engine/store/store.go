// Package store is the run's file store (docs/language.md#store): an in-memory map
// of validated relative paths to contents, shared by every section, chain
// and fanout arm of a run. All operations are safe for concurrent use.
//
// Sizes are bounded: one file and the whole store have byte caps, so a
// runaway prompt cannot use the store to exhaust memory; exceeding a cap is
// an error of kind Quota.
package store

import (
	"fmt"
	"github.com/forge-lsp/forge-lsp/engine/rules"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ErrorKind classifies store errors (the store messages of
// docs/language.md#store, plus Quota).
type ErrorKind int

// Store error kinds.
const (
	NotFound ErrorKind = iota
	Anchor
	InvalidAnchor
	InvalidPath
	InvalidPattern
	InvalidRange
	WriteRace
	Backend
	// Quota is a file or store size cap; the run reports it as kind Quota.
	Quota
)

// Error is a store failure. Its text is the user-facing message, which
// names the path or pattern.
type Error struct {
	Kind ErrorKind
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Default caps.
const (
	DefaultFileBytes  = 16 << 20
	DefaultTotalBytes = 128 << 20
	// MaxPathBytes caps paths and glob patterns.
	MaxPathBytes = rules.MaxPathBytes
	// MaxSegmentBytes caps one path segment (see rules.MaxSegmentBytes).
	MaxSegmentBytes = rules.MaxSegmentBytes
)

// Store is an in-memory file store. The zero value is not usable; call New.
type Store struct {
	mu    sync.Mutex
	files map[string]string
	total int64
	// fileCap and totalCap bound one file and the sum of all files.
	fileCap, totalCap int64
}

// New returns an empty store with the default caps.
func New() *Store {
	return &Store{files: map[string]string{}, fileCap: DefaultFileBytes, totalCap: DefaultTotalBytes}
}

// SetLimits changes the caps; a value <= 0 keeps the current one.
func (s *Store) SetLimits(fileBytes, totalBytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fileBytes > 0 {
		s.fileCap = fileBytes
	}
	if totalBytes > 0 {
		s.totalCap = totalBytes
	}
}

// RaceTracker detects write-write races between the arms of one fanout
// call: the first arm to write a path owns it for the rest of the call.
type RaceTracker struct {
	mu     sync.Mutex
	owners map[string]int
}

// NewRaceTracker returns a tracker for one fanout call.
func NewRaceTracker() *RaceTracker { return &RaceTracker{owners: map[string]int{}} }

// Claim records that arm wrote p, or fails when another arm already did.
func (t *RaceTracker) Claim(p string, arm int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.owners[p]; ok && o != arm {
		return &Error{Kind: WriteRace, Path: p, Msg: fmt.Sprintf("write-write race on %s: another arm of the same fanout already wrote it", p)}
	}
	t.owners[p] = arm
	return nil
}

// Claim pairs a tracker with the writing arm's index in that fanout call.
type Claim struct {
	Tracker *RaceTracker
	Arm     int
}

func (s *Store) put(p, data string) error {
	if int64(len(data)) > s.fileCap {
		return &Error{Kind: Quota, Path: p, Msg: fmt.Sprintf("store quota exceeded: %s would hold %d bytes (cap %d per file)", p, len(data), s.fileCap)}
	}
	old := int64(len(s.files[p]))
	if s.total-old+int64(len(data)) > s.totalCap {
		return &Error{Kind: Quota, Path: p, Msg: fmt.Sprintf("store quota exceeded: writing %s would grow the store past %d bytes", p, s.totalCap)}
	}
	s.total += int64(len(data)) - old
	s.files[p] = data
	return nil
}

// Write creates or replaces p. claims are the race trackers of the
// enclosing fanout calls (innermost last); walk and H1 writes pass none.
func (s *Store) Write(p, data string, claims ...Claim) error {
	if err := ValidatePath(p); err != nil {
		return err
	}
	for _, c := range claims {
		if err := c.Tracker.Claim(p, c.Arm); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.put(p, data)
}

// Append adds data to the end of p, creating it if missing. Never a race.
func (s *Store) Append(p, data string) error {
	if err := ValidatePath(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.files[p]
	if int64(len(old))+int64(len(data)) > s.fileCap {
		return &Error{Kind: Quota, Path: p, Msg: fmt.Sprintf("store quota exceeded: %s would hold %d bytes (cap %d per file)", p, len(old)+len(data), s.fileCap)}
	}
	return s.put(p, old+data)
}

// Read returns the exact contents of p.
func (s *Store) Read(p string) (string, error) {
	if err := ValidatePath(p); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.files[p]
	if !ok {
		return "", notFound(p)
	}
	return d, nil
}

func notFound(p string) error {
	return &Error{Kind: NotFound, Path: p, Msg: "file not found: " + p}
}

// lines splits on \n, dropping the \r of \r\n pairs; a final newline does
// not add an empty line (docs/language.md#line-ranges).
func lines(d string) []string {
	if d == "" {
		return nil
	}
	ls := strings.Split(d, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	for i := range ls {
		// Only a \r that was followed by \n; the last line keeps its \r
		// when the file does not end in a newline.
		if i < len(ls)-1 || strings.HasSuffix(d, "\n") {
			ls[i] = strings.TrimSuffix(ls[i], "\r")
		}
	}
	return ls
}

// slice applies the bound rules of
// docs/language.md#line-ranges. a and b are nil when absent.
func (s *Store) slice(p string, a, b *int64) ([]string, int, error) {
	if err := ValidatePath(p); err != nil {
		return nil, 0, err
	}
	if b != nil && a == nil {
		return nil, 0, rangeErr(p, "start is required when end is given")
	}
	d, err := s.Read(p)
	if err != nil {
		return nil, 0, err
	}
	ls := lines(d)
	start := int64(1)
	if a != nil {
		start = *a
	}
	if start < 1 {
		return nil, 0, rangeErr(p, "start must be at least 1")
	}
	if start > int64(len(ls)) {
		return nil, 0, nil
	}
	end := int64(len(ls))
	if b != nil {
		end = *b
		if end < 0 {
			end = 0
		}
		if end > int64(len(ls)) {
			end = int64(len(ls))
		}
	}
	if end < start {
		return nil, 0, rangeErr(p, "end must not be before start")
	}
	return ls[start-1 : end], int(start), nil
}

func rangeErr(p, reason string) error {
	return &Error{Kind: InvalidRange, Path: p, Msg: fmt.Sprintf("invalid line range for %s: %s", p, reason)}
}

// ReadLines returns lines a..b (1-based, inclusive) joined by \n. a and b
// are nil when not given; see docs/language.md#line-ranges for the
// bound rules.
func (s *Store) ReadLines(p string, a, b *int64) (string, error) {
	ls, _, err := s.slice(p, a, b)
	if err != nil {
		return "", err
	}
	return strings.Join(ls, "\n"), nil
}

// ReadNumbered is ReadLines with each line prefixed "<n>| ", numbers
// right-aligned to the widest one shown.
func (s *Store) ReadNumbered(p string, a, b *int64) (string, error) {
	ls, first, err := s.slice(p, a, b)
	if err != nil || len(ls) == 0 {
		return "", err
	}
	w := len(strconv.Itoa(first + len(ls) - 1))
	var sb strings.Builder
	for i, l := range ls {
		if i > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "%*d| %s", w, first+i, l)
	}
	return sb.String(), nil
}

// StrReplace replaces the only occurrence of old in p with new.
func (s *Store) StrReplace(p, old, new string) error {
	if err := ValidatePath(p); err != nil {
		return err
	}
	if old == "" {
		return &Error{Kind: InvalidAnchor, Path: p, Msg: "anchor must not be empty"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.files[p]
	if !ok {
		return notFound(p)
	}
	switch n := strings.Count(d, old); n {
	case 0:
		return &Error{Kind: Anchor, Path: p, Msg: "anchor not found in " + p}
	case 1:
		return s.put(p, strings.Replace(d, old, new, 1))
	default:
		return &Error{Kind: Anchor, Path: p, Msg: fmt.Sprintf("anchor occurs %d times in %s, expected exactly one", n, p)}
	}
}

// Delete removes p; deleting a missing file is not an error.
func (s *Store) Delete(p string) error {
	if err := ValidatePath(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total -= int64(len(s.files[p]))
	delete(s.files, p)
	return nil
}

// Exists reports whether p exists; an invalid path is an error.
func (s *Store) Exists(p string) (bool, error) {
	if err := ValidatePath(p); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.files[p]
	return ok, nil
}

// Glob returns the paths matching pat, in byte order.
func (s *Store) Glob(pat string) ([]string, error) {
	m, err := CompileGlob(pat)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var out []string
	for p := range s.files {
		if m.Match(p) {
			out = append(out, p)
		}
	}
	s.mu.Unlock()
	sort.Strings(out)
	return out, nil
}

// Paths returns every path in byte order.
func (s *Store) Paths() []string {
	s.mu.Lock()
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	s.mu.Unlock()
	sort.Strings(out)
	return out
}

// Snapshot returns a copy of every file.
func (s *Store) Snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.files))
	for p, d := range s.files {
		out[p] = d
	}
	return out
}
