package template

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/suggest"
)

// ErrMissingKey is the kind of a placeholder whose key does not exist
// (docs/language.md#placeholder-errors).
const ErrMissingKey = "MissingKey"

// KeyError is a placeholder the engine refuses wherever it stands because
// its key is one the engine never sets: a sys key that is not in
// engine/api's sys table, or an old form upstream renamed
// (`{{ sys.taskid }}`).
type KeyError struct {
	Error
	// Old is the old form the key spells (nil when it is not one).
	Old *api.OldForm
	// Path is the replacement placeholder path when the old form has one
	// that renders the same text ("sys.index" for sys.taskid), else "".
	Path string
}

// SysKeys returns the keys sys may hold somewhere in a run: engine/api's
// sys members, which a test of the engine (engine/run) keeps equal to the
// keys the runtime sets. The slice must not be modified.
func SysKeys() []string { return api.Members("sys", api.Anywhere) }

// CheckKey reports a placeholder the engine refuses whatever the run's
// values are because its key is never set: `{{ sys.k }}` for a k outside
// SysKeys. The engine calls it before resolving a placeholder and the
// checker calls it for every placeholder, so both refuse the same keys
// with the same words. It returns nil for every other placeholder (and
// for one Check refuses).
func CheckKey(n *Node) *KeyError {
	if n.Kind != Placeholder || len(n.Segments) < 2 || n.Segments[0].Name != "sys" || Check(n) != nil {
		return nil
	}
	key := n.Segments[1].Name
	keys := SysKeys()
	for _, k := range keys {
		if k == key {
			return nil
		}
	}
	e := &KeyError{Error: Error{Kind: ErrMissingKey, Span: n.Span}}
	msg := "placeholder `{{ " + n.Text + " }}`: sys has no field `" + key + "`"
	if o, ok := api.LookupOld("sys." + key); ok {
		e.Old = o
		msg += ": " + api.OldMessage(o)
		if rest, ok := strings.CutPrefix(o.New, "sys."); ok && len(n.Segments) == 2 && isName(rest) {
			e.Path = o.New
			msg += "; write `{{ " + o.New + " }}`"
		}
	} else if to := suggest.Closest(key, keys); to != "" {
		msg += "; did you mean `sys." + to + "`?"
	} else {
		msg += " (sys keys: " + strings.Join(keys, ", ") + ")"
	}
	e.Message = msg
	return e
}

// isName reports whether s is a Lua name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
