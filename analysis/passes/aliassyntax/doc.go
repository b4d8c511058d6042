// Package aliassyntax checks every literal tool and model alias against
// the engine's alias grammar, [A-Za-z][A-Za-z0-9_-]{0,63} (engine/toolrule
// ValidAlias, the same rule the runtime uses).
//
// Checked: the alias argument of tools.bind/need, tools.always, tools.add
// (plain strings and the strings of an array), tools.add_local,
// models.bind/need, models.default, models.use and models.get, and the key
// of tools.calls.<name> and tools.calls["name"]. The diagnostic points at
// the literal.
package aliassyntax
