// Package run executes a parsed prompt: the H1 pass, the walk over the
// sections, control flow between them, the Lua host API, and the prose
// blocks sent to a model. docs/language.md is the behaviour it implements
// (mainly its "Running a prompt", "Section environment", "Lua API",
// "Tools", "Models" and "Control flow" chapters); comments cite its
// sections as links such as docs/language.md#h1-pass.
//
// Hosts call Run (the whole prompt) or RunSection (the H1, then one
// section alone: docs/language.md#running-one-section) with a Config, or prepare both through
// engine/session, which also opens the gateway client and the workspace
// tools. A run keeps no global state: everything lives in the runner
// built by start and in one VM per H1 pass, section entry, chain entry and
// fanout arm. Errors are *RunError, whose Kind is the error kind a prompt
// author sees; the Observer receives section, model, tool and log events,
// possibly from several fanout arms at once.
//
// The files, by concept:
//
//   - walk.go: Run and RunSection, the H1 pass, the walk with its
//     fall-through, jumps and entry cap, a section's block walk, execute
//     chains.
//   - control.go: jump, execute, fanout (arms, concurrency, results) and
//     list_from_section. Section lookup itself is engine/parse's
//     (Visible, Resolve), shared with the analyzer.
//   - vm.go: the VM, its set-up (newVM), sys, log, untrusted, running a
//     chunk and a local tool handler.
//   - host.go: the host API installed from engine/api (installHostAPI,
//     hostFuncs), upstream's errors for a call in the wrong place, and
//     handleType, the one helper behind tool objects, model objects and
//     fanout results.
//   - var.go, shims.go, convert.go: the `var` proxy over a JSON tree, the
//     table shims that let the standard library treat it as a table, and
//     the conversions between Lua values, JSON and result text.
//   - store_api.go, tools_api.go, models_api.go: the store, tools and
//     models APIs with their per-run and per-VM state.
//   - prose.go, render.go: a prose block: scope and model before
//     substitution, placeholder substitution, then one model round or the
//     tool loop (engine/loop).
//   - errors.go, luaerr.go: RunError and its kinds; mapping Lua errors to
//     prompt lines.
//   - config.go, observer.go: what a host passes in and what it hears.
//
// Adding a host function takes an entry in engine/api (name, signature,
// where it is defined and allowed, doc) and its implementation plus one
// line in hostFuncs; the VMs, the analyzer, hover and completion all read
// the placement from the api entry. TestHostFuncsMatchAPI and engine/api's
// TestMatchesRuntime fail when the two disagree.
//
// The tools and models APIs plug into the walk at fixed points, in this
// order: at run start initTools (registry checks) then initModels; in
// every VM the api tables, and for section VMs the alias globals after
// the shared library (bindToolGlobals, bindModelGlobals); after each H1
// Lua block takeToolBindingError then takeModelBindingError (a binding
// error ends the run even when Lua caught it, the tool error first);
// after the H1, afterH1Tools; around each prose block beforeProse, then
// substitution, then runProse for non-blank text.
package run
