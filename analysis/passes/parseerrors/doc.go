// Package parseerrors surfaces the engine parser's errors (frontmatter,
// structure, fence, list, lua-syntax) as diagnostics, so that the checker
// and the editor report exactly what the runtime would refuse.
//
// It adds quick fixes where the repair is certain: an unknown frontmatter
// key close to a known one is renamed, and a quoted `promptforge: "1"` is
// unquoted.
package parseerrors
