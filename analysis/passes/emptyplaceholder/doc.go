// Package emptyplaceholder reports a placeholder that renders empty for
// certain: {{ var.key }} or {{ name }} in prose whose value, when the
// block is substituted, is known to be the empty string (the Lua block
// right before the prose leaves it so on every path). The model then gets
// the sentence around it with nothing in the gap, which `forge-lsp
// render` would show (docs/review.md); usually a value was meant to be
// filled in before the prose, or the key is a typo for one that is.
//
// Only prose that follows a Lua block directly, in a section the walk
// enters and whose earlier blocks let it run, is judged: there the
// values are the block's, with no tool handler run in between.
package emptyplaceholder
