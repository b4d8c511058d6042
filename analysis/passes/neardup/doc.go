// Package neardup reports near-duplicate tools available to the same
// section, with the engine's own rule and function (engine/toolrule
// NearDuplicates, docs/language.md#near-duplicate-tools): model-facing descriptions are normalised
// and compared by edit distance; similarity >= 0.90 is a near-duplicate,
// and the runtime refuses the section's prose before any model call.
//
// Per section it collects, in scope order, the always tools, the tools
// added in the section (and by the shared library) and the section's
// local tools, with their model-facing description when it is a literal:
// the tools.add override, else the tools.always or tools.bind override
// (catalog descriptions are not known statically), and the add_local
// description. Every offending pair is reported at the call that made the
// second tool available; pairs of two always tools are reported once.
// Tools in different sections never clash.
package neardup
