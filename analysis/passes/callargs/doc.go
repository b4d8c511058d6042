// Package callargs checks literal and constant-folded arguments of host
// calls with the engine's own rules (engine/rules, engine/store): log
// messages, fanout collections, store paths and glob patterns, and values
// assigned to var. It also reports store reads of a literal path that no
// code of the prompt can have written, when no `input:` is declared.
//
// A call at a chunk's top level fails the run whenever it is reached, so
// its finding is an error; inside a function body (where a pcall may
// catch it) the finding is a warning.
package callargs
