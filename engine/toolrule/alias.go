// Package toolrule holds the rules about tools that need no runtime: the
// alias grammar, the wire-name grammar, the near-duplicate test over
// tool descriptions, the lexical capability picker, the built-in tools'
// catalog data, the catalog built from them and the workspace tools file
// (forge-tools.json) format. It reads no file: engine/toolcat finds and
// loads the tools file. The runtime (engine/run, engine/tools) enforces them
// and the analyzer reports them before a run; both call these functions,
// so a rule is written once. The package imports no network, store or Lua
// code, which keeps the analyzer's dependency graph small.
package toolrule

// AliasPattern is the grammar of tool and model aliases (docs/language.md#aliases):
// ASCII, case-sensitive, at most 64 bytes. The analyzer and the runtime
// both use ValidAlias; never copy the pattern.
const AliasPattern = `[A-Za-z][A-Za-z0-9_-]{0,63}`

// ValidAlias reports whether s is a valid tool or model alias, that is
// whether s matches AliasPattern in full. It is a byte loop rather than a
// regular expression: the analyzer checks every literal alias of a prompt
// after each edit, and the counted repetition makes the regexp slow.
func ValidAlias(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// AliasError is the message for an invalid alias; what is "tool" or
// "model".
func AliasError(what, alias string) string {
	return "invalid " + what + " alias \"" + alias + "\": expected " + AliasPattern
}

// ValidWireName reports whether s is a valid function name on the wire:
// [A-Za-z0-9_.-]+.
func ValidWireName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
