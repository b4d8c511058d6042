package gatewayd

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The chat route reads only what routing needs (the model, stream,
// stream_options and the shape of messages) and passes every other byte
// of the body through untouched (docs/gateway.md#serving). These helpers
// walk a JSON text without decoding it: no maps, no allocation per
// member, one pass over the bytes.

// errSyntax is a JSON text the scanner cannot walk: an unterminated
// string, unbalanced brackets or a stray character.
var errSyntax = errors.New("invalid JSON")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string that opens at b[i] ('"').
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errSyntax
		}
		i += j
		// An escaped quote has an odd number of backslashes before it.
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i, nil
		}
	}
}

// maxDepth bounds the nesting the scanner follows, as encoding/json does.
const maxDepth = 10000

// skipValue returns the index after the value that starts at b[i]. It
// checks strings are terminated, brackets balance and match, and literals
// are made of literal characters; the endpoint checks the rest.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		var stack [64]byte
		open := stack[:0]
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			case '{', '[':
				if len(open) >= maxDepth {
					return 0, errSyntax
				}
				open = append(open, c)
			case '}', ']':
				if len(open) == 0 || open[len(open)-1] != c-2 { // '{'+2 == '}', '['+2 == ']'
					return 0, errSyntax
				}
				open = open[:len(open)-1]
				if len(open) == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSyntax
	default:
		j := i
		for j < len(b) && isLiteral(b[j]) {
			j++
		}
		if j == i {
			return 0, errSyntax
		}
		return j, nil
	}
}

func isLiteral(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// span is a value's bytes in its text: b[start:end].
type span struct{ start, end int }

func (s span) ok() bool { return s.end > s.start }

// eachMember calls f with the key and value span of each member of the
// object that starts at b[i] (after spaces), in order, and returns the
// index after the object. f returning false stops the walk early (the
// returned index is then 0). A key with escapes is given decoded.
func eachMember(b []byte, i int, f func(key []byte, v span) bool) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errSyntax
		}
		ke, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : ke-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if json.Unmarshal(b[i:ke], &s) != nil {
				return 0, errSyntax
			}
			key = []byte(s)
		}
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, errSyntax
		}
		vs := skipSpace(b, i+1)
		ve, err := skipValue(b, vs)
		if err != nil {
			return 0, err
		}
		if !f(key, span{vs, ve}) {
			return 0, nil
		}
		i = skipSpace(b, ve)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		if i >= len(b) || b[i] != ',' {
			return 0, errSyntax
		}
		i = skipSpace(b, i+1)
	}
}

// eachElement calls f with the span of each element of the array that
// starts at b[i]; it returns the number of elements.
func eachElement(b []byte, i int, f func(int, span) error) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return 0, errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return 0, nil
	}
	for n := 0; ; n++ {
		e, err := skipValue(b, i)
		if err != nil {
			return 0, err
		}
		if err := f(n, span{i, e}); err != nil {
			return 0, err
		}
		i = skipSpace(b, e)
		if i < len(b) && b[i] == ']' {
			return n + 1, nil
		}
		if i >= len(b) || b[i] != ',' {
			return 0, errSyntax
		}
		i = skipSpace(b, i+1)
	}
}

// wholeObject walks the object that is all of b (spaces around allowed).
func wholeObject(b []byte, f func(key []byte, v span) bool) error {
	end, err := eachMember(b, 0, f)
	if err != nil {
		return err
	}
	if end == 0 { // stopped early
		return nil
	}
	if skipSpace(b, end) != len(b) {
		return errSyntax
	}
	return nil
}

// stringValue decodes a JSON string value; ok is false for any other
// value. A string without escapes is returned without a copy of its
// bytes beyond the string conversion.
func stringValue(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// rawString is a JSON string's bytes when it has no escapes (no copy);
// otherwise the decoded string's bytes.
func rawString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], true
	}
	s, ok := stringValue(v)
	return []byte(s), ok
}
