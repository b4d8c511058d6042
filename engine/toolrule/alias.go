// Package toolrule holds the rules about tools that need no runtime: the
// alias grammar, the wire-name grammar, the near-duplicate test over
// tool descriptions, the lexical capability picker, the built-in tools'
// catalog data and the workspace tools file (forge-tools.json) format. The runtime (engine/run, engine/tools) enforces them
// and the analyzer reports them before a run; both call these functions,
// so a rule is written once. The package imports no network, store or Lua
// code, which keeps the analyzer's dependency graph small.
package toolrule

import (
	"regexp"
	"sync"
)

// AliasPattern is the grammar of tool and model aliases (docs/language.md#aliases):
// ASCII, case-sensitive, at most 64 bytes. The analyzer and the runtime
// both use ValidAlias; never copy the pattern.
const AliasPattern = `[A-Za-z][A-Za-z0-9_-]{0,63}`

// aliasRE matches a whole valid alias. It is compiled on first use: the
// counted repetition makes it costly, and every command (even `version`)
// would otherwise pay for it at start-up.
var aliasRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^` + AliasPattern + `$`) })

// ValidAlias reports whether s is a valid tool or model alias.
func ValidAlias(s string) bool { return aliasRE().MatchString(s) }

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
