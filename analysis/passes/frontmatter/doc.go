// Package frontmatter checks frontmatter rules that the parser leaves to
// front ends (docs/language.md#versions,
// docs/language.md#prompt-names):
//
//   - frontmatter-name: `name` must match ^[a-z][a-z0-9_]{0,47}$ and must
//     not be a reserved catalog name (list_prompts, run_prompt,
//     need_prompt, check_run); a warning, with a fix when a normalised
//     name is valid.
//   - frontmatter-version: `promptforge` must be present and equal to 1,
//     the only version this engine runs; an error, with a fix that adds
//     `promptforge: 1` when it is missing.
//
// Unknown keys (with a did-you-mean), types, and the max_tool_iterations
// range 1..1000 are parse errors, reported by the parseerrors analyzer
// with code `frontmatter`.
package frontmatter
