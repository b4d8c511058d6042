// Package placement checks that host API calls run where the runtime
// allows them, using the Defined/Allowed contexts of the engine/api table.
//
//   - misplaced-call: an H1-only call (tools.bind/need, tools.always,
//     models.bind/need, models.default) in section code or the shared
//     library; a section-only call (tools.add, models.use, models.get,
//     jump, execute, fanout, list_from_section) in H1; jump at the top
//     level of the `lua shared` library, which runs during the
//     shared-library load; a top-level read of tools.calls before the
//     section's first prose block, where the engine has not installed it
//     yet. (add_local in H1 and jump in handlers have their own codes.)
//   - late-model-use: models.use after the section's first prose block.
//     The section's prose model is frozen at its first prose block, so a
//     later models.use changes only models.infer (docs/language.md#section-models).
package placement
