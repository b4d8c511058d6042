// Package aliases checks that tool and model aliases are declared before
// use and declared once, as the runtime does (docs/language.md#aliases).
//
//   - undeclared-alias: tools.always or tools.add of an alias no
//     tools.bind declares (or, for always, that is declared only later);
//     tools.add of a local tool's alias; tools.calls.x where x is not in
//     the section's tool scope (always, added and local tools);
//     models.use, models.get or models.default(alias) of a model alias no
//     models.bind/models.default declares.
//   - duplicate-alias: a tool or model alias bound twice, tools.always of
//     the same alias twice, tools.add_local colliding with a bound alias or
//     with another add_local of the same section.
//   - called-twice: a second models.default in the prompt, or a second
//     models.use in one section.
//
// Only literal aliases are judged.
package aliases
