// Package markdown reports Markdown that parses differently from what the
// author probably meant (docs/language.md#setext-pitfall,
// docs/language.md#lua-fences):
//
//   - setext-heading: a `---` line directly under a paragraph line turns
//     that line into an H2 section (docs/language.md#setext-pitfall).
//   - heading-like-prose: a line such as `##Name` (no space) or seven `#`s
//     is prose, not a heading, and is sent to the model.
//   - fence-near-miss: a fence such as ```Lua, ```lua with trailing text,
//     an indented or four-backtick ```lua, or ~~~lua is not a Lua chunk:
//     its code is sent to the model as prose.
//   - all-off-walk: every top-level section is off-walk, so the walk runs
//     nothing.
//   - empty-loop-prose: two adjacent Lua fences after the prose create an
//     empty prose block that becomes the loop-capable one, so the real
//     prose gets a single model round without the tool loop.
package markdown
