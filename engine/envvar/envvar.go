// Package envvar is the one ${VAR} interpolator of forge-lsp's
// configuration files: gateway files (engine/gatewayd) and the MCP
// server's prompts.toml expand their string values with it, so both
// accept the same syntax. Each caller words its own errors (where the
// variable may be defined differs) from the typed errors here.
//
// Syntax: ${NAME} is replaced by NAME's value; $$ is a literal $; any
// other $ stays as it is.
package envvar

import (
	"errors"
	"strings"
)

// ErrUnclosed is the error of a ${ without its closing brace.
var ErrUnclosed = errors.New("unclosed ${")

// UnsetError is the error of a ${NAME} whose NAME lookup does not know.
// It names the variable, never a value.
type UnsetError struct{ Name string }

func (e *UnsetError) Error() string { return "${" + e.Name + "} is not set" }

// Expand expands s with lookup. Its error is ErrUnclosed or an
// *UnsetError for the first problem.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", ErrUnclosed
			}
			name := s[i+2 : i+2+end]
			v, ok := lookup(name)
			if !ok {
				return "", &UnsetError{Name: name}
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
