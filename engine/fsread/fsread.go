// Package fsread is the one reader for files a repository controls: prompts,
// test files, cassettes, workspace configuration, store seed folders and
// debugger sources. A repository nobody vetted may put a named pipe, a
// socket or a link to a device such as /dev/zero where a file is expected;
// this package opens only regular files (after following links) and never
// reads more than the cap of the file's kind, so such a file yields an
// error naming the path, the kind and the cap instead of a hang or an
// unbounded allocation. See docs/security.md#reads.
package fsread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Kind names a class of repository file and its size cap.
type Kind struct {
	// Name is how errors call the file: "prompt", "cassette", ...
	Name string
	// Max is the largest size, in bytes, a file of this kind may have.
	Max int64
	// Hint, when set, is appended to a too-large error as the way out.
	Hint string
}

// The kinds the tools read. Prompt matches the language server's analysis
// cap; configuration files are small by nature; cassettes are streamed
// line by line (Open), and a replay keeps about their size in memory, so
// their cap keeps a replay well under 300 MB resident.
var (
	Prompt    = Kind{Name: "prompt", Max: 4 << 20, Hint: "split it"}
	TestFile  = Kind{Name: "test file", Max: 4 << 20, Hint: "split its cases over several files"}
	Config    = Kind{Name: "configuration file", Max: 1 << 20}
	Cassette  = Kind{Name: "cassette", Max: 64 << 20, Hint: "record fewer or smaller exchanges"}
	StoreSeed = Kind{Name: "store seed file", Max: 16 << 20}
	Source    = Kind{Name: "debugger source", Max: 4 << 20}
)

// ErrNotRegular is wrapped by errors for a path that is not, after
// following links, a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by errors for a file over its kind's cap.
var ErrTooLarge = errors.New("file too large")

// Error is the error every function here returns for a file refused by
// type or size. Errors from the file system (not found, permission) are
// returned as they come, so errors.Is(err, fs.ErrNotExist) still works.
type Error struct {
	Path string
	Kind Kind
	// What the path is when it is not a regular file ("a named pipe").
	What string
	// Size is the size seen when the file is too large.
	Size int64
}

func (e *Error) Error() string {
	if e.What != "" {
		return fmt.Sprintf("%s is %s, not a regular file; only regular files are read as a %s", e.Path, e.What, e.Kind.Name)
	}
	msg := fmt.Sprintf("%s is %d bytes, more than the %d-byte limit for a %s", e.Path, e.Size, e.Kind.Max, e.Kind.Name)
	if e.Kind.Hint != "" {
		msg += "; " + e.Kind.Hint
	}
	return msg
}

// Unwrap lets errors.Is match ErrNotRegular or ErrTooLarge.
func (e *Error) Unwrap() error {
	if e.What != "" {
		return ErrNotRegular
	}
	return ErrTooLarge
}

// ReadFile reads path whole when it is a regular file (after following
// links) of at most k.Max bytes.
func ReadFile(path string, k Kind) ([]byte, error) {
	f, size, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	buf.Grow(int(size) + 1)
	// Read one byte past the cap: the file may have grown since Stat.
	if _, err := buf.ReadFrom(io.LimitReader(f, k.Max+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > k.Max {
		return nil, &Error{Path: path, Kind: k, Size: int64(buf.Len())}
	}
	return buf.Bytes(), nil
}

// Open opens path for streaming when it is a regular file (after following
// links) of at most k.Max bytes, and returns its size at open. The caller
// reads through Limit (or checks its own count) if the file may grow.
func Open(path string, k Kind) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	// Checked before opening: opening a named pipe blocks until a writer
	// comes.
	if err := Check(path, fi, k); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	// The path may have been replaced between the two looks.
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, 0, err
	}
	if err := Check(path, fi, k); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// Limit wraps r (a file from Open) so that reading more than k.Max bytes
// fails with the kind's too-large error instead of going on.
func Limit(path string, r io.Reader, k Kind) io.Reader {
	return &limited{r: r, path: path, k: k}
}

type limited struct {
	r    io.Reader
	path string
	k    Kind
	n    int64
}

func (l *limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.k.Max {
		return 0, &Error{Path: l.path, Kind: l.k, Size: l.n}
	}
	return n, err
}

// Stat reports, without opening it, whether path may be read as a k: it
// exists, is a regular file after following links, and is within the cap.
func Stat(path string, k Kind) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return Check(path, fi, k)
}

// Check reports whether fi (of path, links followed) may be read as a k.
func Check(path string, fi fs.FileInfo, k Kind) error {
	m := fi.Mode()
	if !m.IsRegular() {
		return &Error{Path: path, Kind: k, What: describe(m)}
	}
	if fi.Size() > k.Max {
		return &Error{Path: path, Kind: k, Size: fi.Size()}
	}
	return nil
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
