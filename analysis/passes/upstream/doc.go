// Package upstream flags the upstream PromptForge spellings tools.need and
// models.need. The Go engine accepts them as exact synonyms of tools.bind
// and models.bind (docs/language.md#upstream-spellings), so this is a hint with a quick fix that
// renames the call, not an error.
package upstream
