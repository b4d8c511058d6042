// Package luahygiene checks Lua chunks against the engine's environment
// (the engine/api table), as luacheck does for plain Lua:
//
//   - undefined-global: a global that is read but neither provided by the
//     engine in that context, nor assigned anywhere in the same VM (the
//     section's chunks plus the shared library, or the H1 chunks), nor a
//     bound tool or model alias (sections get one global per alias).
//     Typos such as `tool.add` get a did-you-mean quick fix.
//   - undefined-field: a member of a host or library table that does not
//     exist (`tools.ad`, `store.reed`, `sys.nmae`, `string.frmat`).
//   - readonly-global: a write to a read-only host name: `sys.x = ...`,
//     `tools.calls.x = ...`, reassigning `var`, `sys`, `tools`, `models`,
//     `store`, `log` or a control function, or assigning into the
//     tools/models/store tables.
//   - sandbox-removed: a standard name the sandbox removes (print,
//     require, load, dofile, io, os, debug, ...).
//   - unused-local: a local variable or local function that is never read
//     (names starting with _ are exempt; parameters are not reported).
//   - unreachable-code: a statement after return, break, jump(...) or
//     error(...) in the same block.
package luahygiene
