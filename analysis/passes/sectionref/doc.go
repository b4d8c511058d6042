// Package sectionref resolves the literal section targets of jump,
// execute, fanout (the worker) and list_from_section with the engine's
// own rules (engine/parse.ParseTarget and parse.Resolve: the caller's
// siblings minus itself plus its direct children, matched on level and
// exact name).
//
//   - bad-section-target: the target is not a heading string ("Review"
//     instead of "## Review", "##Review"); a quick fix adds the markers
//     when a visible section has that name.
//   - unknown-section: no visible section matches (or several do). The
//     message lists the visible sections, says when the section exists but
//     is not visible from here, and a did-you-mean quick fix replaces the
//     target.
//   - section-kind: list_from_section of a section without list items, or
//     fanout over a list section used as the worker.
//
// Code in a fanout worker also resolves against the fanout caller's
// visible set (minus the worker, plus the worker's children), as arms do.
// Calls in the shared library are skipped: their caller is not known.
package sectionref
