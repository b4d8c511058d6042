package api

import "sync"

// OldKind says where an old form is written in a prompt.
type OldKind uint8

// Old form kinds.
const (
	// OldMember is a renamed or removed member of an engine table
	// (models.always, store.inject, sys.taskid): Old is its dotted path.
	OldMember OldKind = iota
	// OldGlobal is a removed global (tasks).
	OldGlobal
	// OldCall is an argument shape a function no longer takes (fanout
	// over a list heading, tools.add with several aliases): Old names the
	// function.
	OldCall
	// OldAssign is a write the engine no longer allows (a Tool object's
	// description): Old is "Handle.field".
	OldAssign
	// OldFence is a removed fence info string (```lua prompt).
	OldFence
	// OldFrontmatter is a frontmatter value or key upstream retired.
	OldFrontmatter
)

// OldForm is one spelling that upstream PromptForge renamed or removed,
// with what replaced it (docs/migration.md).
type OldForm struct {
	// Old is the spelling as a prompt writes it ("models.always",
	// "sys.taskid", "fanout", "Tool.description", "lua prompt",
	// "promptforge: 2").
	Old  string
	Kind OldKind
	// Shape describes the old form for messages when Old alone does not
	// ("fanout(worker, \"### List\")").
	Shape string
	// New is the replacement as a prompt writes it.
	New string
	// Rewrite describes the mechanical rewrite, "" when there is none
	// (the author has to decide).
	Rewrite string
	// Safe marks a rewrite that keeps the meaning: `check --fix` applies
	// it. Other rewrites are only offered in the editor.
	Safe bool
	// Refused is true when the engine refuses the old form (it fails the
	// run or the parse); false when it is accepted with another meaning.
	Refused bool
	// Commit and Date are the upstream change that retired the form
	// (github.com/cppalliance/promptforge); Via lists earlier steps
	// ("995e33d 2026-08-16: renamed to models.only").
	Commit, Date string
	Via          string
	// Why is the upstream change in a few words.
	Why string
}

// Since is "upstream <commit>, <date>" for messages.
func (o *OldForm) Since() string { return "upstream " + o.Commit + ", " + o.Date }

// Display is the old form as messages show it.
func (o *OldForm) Display() string {
	if o.Shape != "" {
		return o.Shape
	}
	return o.Old
}

// oldForms is the table, in the order of docs/migration.md. Every entry
// was established from upstream's history between v0.1.0 (d5f8887,
// 2026-08-12) and f47f6cc (2026-08-22), plus the older forms its v0.1.0
// guide and examples still used.
var oldForms = []OldForm{
	{Old: "models.always", Kind: OldMember, New: "models.default", Rewrite: "rename the call", Safe: true, Refused: true,
		Commit: "089da6c", Date: "2026-08-18", Via: "995e33d (2026-08-16) renamed models.always to models.only",
		Why: "the prompt-wide default model is declared with models.default"},
	{Old: "models.only", Kind: OldMember, New: "models.default", Rewrite: "rename the call", Safe: true, Refused: true,
		Commit: "089da6c", Date: "2026-08-18", Why: "models.only was renamed to models.default"},
	{Old: "tools.local", Kind: OldMember, New: "tools.add_local", Rewrite: "rename the call", Safe: true, Refused: true,
		Commit: "3622a44", Date: "2026-08-18", Why: "local tools are declared with tools.add_local"},
	{Old: "store.read_lines", Kind: OldMember, New: "store.read_numbered", Rewrite: "rename the call", Safe: true, Refused: true,
		Commit: "931d83e", Date: "2026-08-18", Via: "eeccece (2026-08-18) added store.read_numbered",
		Why: "numbered reads are store.read_numbered, with optional line bounds"},
	{Old: "store.inject", Kind: OldMember, Shape: "store.inject(path)", New: "untrusted(store.read(path))",
		Rewrite: "store.inject(p) becomes untrusted(store.read(p))", Safe: true, Refused: true,
		Commit: "82f0795", Date: "2026-08-18", Via: "9867e03 (2026-08-18) added the untrusted() global",
		Why: "any string is wrapped in the untrusted envelope with the untrusted() global"},
	{Old: "sys.taskid", Kind: OldMember, New: "sys.index", Rewrite: "sys.taskid becomes tostring(sys.index) (taskid was the index as a string)",
		Safe: true, Refused: true, Commit: "35ac8c9", Date: "2026-08-19",
		Why: "a fanout arm's 1-based position is the integer sys.index"},
	{Old: "tasks", Kind: OldGlobal, Shape: `tasks["## Section"]`, New: `"## Section"`,
		Rewrite: `tasks["## X"] passed to jump, execute or fanout becomes "## X"`, Safe: true, Refused: true,
		Commit: "5512829", Date: "2026-08-19", Why: "control-flow targets are heading strings only; the tasks table was dropped"},
	{Old: "fanout", Kind: OldCall, Shape: `fanout(worker, "### List")`, New: `fanout(worker, list_from_section("### List"))`,
		Rewrite: `the heading becomes list_from_section("### List")`, Safe: true, Refused: true,
		Commit: "ad9a673", Date: "2026-08-18", Via: "d4d42ef (2026-08-18) added list_from_section",
		Why: "fanout's second parameter is always a collection"},
	{Old: "tools.add", Kind: OldCall, Shape: `tools.add("a", "b", ...)`, New: `tools.add({"a", "b", ...})`,
		Rewrite: "the aliases become one array", Safe: true, Refused: true,
		Commit: "5feeee1", Date: "2026-08-19",
		Why: "tools.add takes one alias, Tool or array; its second argument is now the description override"},
	{Old: "Tool.description", Kind: OldAssign, Shape: "tool.description = text", New: `tools.add(alias, text)`,
		Refused: true, Commit: "5feeee1", Date: "2026-08-19",
		Why: "Tool objects are frozen; a description override is the last argument of tools.bind, tools.always or tools.add"},
	{Old: "infer", Kind: OldCall, Shape: "m:infer(prompt) as a statement", New: "reply = m:infer(prompt)",
		Rewrite: "assign the answer to reply, as infer used to", Safe: true,
		Commit: "969ad27", Date: "2026-08-19",
		Why: "infer is one tool-free round that returns its answer and no longer sets reply"},
	{Old: "goto", Kind: OldCall, Shape: `goto("## Section")`, New: `jump("## Section")`, Rewrite: "rename the call",
		Safe: true, Refused: true, Commit: "a27687d", Date: "2026-08-09",
		Why: "the section transfer is jump (goto is a Lua keyword)"},
	{Old: "lua prompt", Kind: OldFence, Shape: "```lua prompt", New: "```lua",
		Rewrite: "```lua for H1 code, ```lua shared for functions every section uses", Refused: true,
		Commit: "324ec00", Date: "2026-08-07", Why: "the H1 opens with a plain lua fence; shared libraries are ```lua shared"},
	{Old: "promptforge: 2", Kind: OldFrontmatter, New: "promptforge: 1", Rewrite: "set the version to 1", Safe: true, Refused: true,
		Commit: "a341423", Date: "2026-08-17", Why: "the engine major is 1; the older guide's examples said 2"},
	{Old: "default_return", Kind: OldFrontmatter, New: "a last section whose Lua returns the text", Refused: true,
		Commit: "e5f003a", Date: "2026-08-15", Why: "the default_return frontmatter field was removed"},
}

var oldIndex = sync.OnceValue(func() map[string]*OldForm {
	m := make(map[string]*OldForm, len(oldForms))
	for i := range oldForms {
		m[oldForms[i].Old] = &oldForms[i]
	}
	return m
})

// OldForms returns the table. The slice must not be modified.
func OldForms() []OldForm { return oldForms }

// LookupOld finds an old form by its Old spelling ("models.always",
// "tasks", "fanout", "Tool.description", "lua prompt").
func LookupOld(old string) (*OldForm, bool) {
	o, ok := oldIndex()[old]
	return o, ok
}

// RenamedTo returns the entry an old member was renamed to when the
// rename keeps the call's arguments (models.always -> models.default),
// so that analysis can treat the old call as its replacement.
func RenamedTo(path string) (*Entry, bool) {
	o, ok := oldIndex()[path]
	if !ok || o.Kind != OldMember || o.Rewrite != "rename the call" {
		return nil, false
	}
	return Lookup(o.New)
}

// OldMessage is the one text both the engine and the checker use for an
// old form: what it became and when.
func OldMessage(o *OldForm) string {
	verb := "was renamed to"
	if o.Rewrite != "rename the call" {
		verb = "was replaced by"
	}
	return o.Display() + " " + verb + " " + o.New + " (" + o.Since() + ": " + o.Why + "; docs/migration.md)"
}
