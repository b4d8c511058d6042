// Package jumphandler reports jump reachable inside a tools.add_local
// handler. While the model calls a local tool, jump raises
// (docs/language.md#local-tools), so the tool call fails and the failure
// ends the run.
//
// Reachable means: directly in the handler function, in a function nested
// in it, in a function the handler calls by name or passes by name (for
// example to pcall), transitively, and in a named function passed as the
// handler itself. Passing jump as a value (pcall(jump, "## X")) counts too.
package jumphandler
