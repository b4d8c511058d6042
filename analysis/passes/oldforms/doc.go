// Package oldforms reports the spellings that upstream PromptForge renamed
// or removed (models.always, store.inject, sys.taskid, fanout over a list
// heading, tools.add with several aliases, ...), one finding per use,
// naming the replacement and the upstream change, with a quick fix. The
// list is engine/api's old-forms table (docs/migration.md).
//
// It is a pass of its own, not part of analysis/passes/upstream: that pass
// hints at spellings the engine accepts as synonyms (tools.need), while
// these are retired forms the engine refuses (an error) or reads with
// another meaning (a warning). Program building analyses a renamed call as
// its replacement (api.RenamedTo) and tools.add("a", "b") as two aliases
// (program.Program.OldMultiAdd), so no other pass reports a follow-on error.
package oldforms
