package run

import (
	"context"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// renderSection runs the H1 and the Lua blocks of the first section, then
// renders the section's first non-empty prose block, so the substitution
// can be checked without a model.
func renderSection(t *testing.T, src, input string) (string, error) {
	t.Helper()
	p := parse.Parse("p.md", []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n"+src))
	if len(p.Errors) > 0 {
		t.Fatalf("parse: %v", p.Errors[0])
	}
	r, err := start(p, &Config{Input: input})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _, _, vars, err := r.h1(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sec := p.Sections[0]
	vm, err := r.newVM(ctx, vmSection, sec, &frame{}, 1, vars, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer vm.close()
	var reply *string
	for _, b := range sec.Blocks {
		if b.Kind == parse.LuaBlock {
			if _, err := vm.runChunk(b.Chunk); err != nil {
				t.Fatal(err)
			}
			reply, _ = vm.replyGlobal(b.Chunk)
			continue
		}
		if strings.TrimSpace(b.Prose.Text) == "" {
			continue
		}
		return vm.render(b.Prose, reply)
	}
	t.Fatal("no prose")
	return "", nil
}

func TestRender(t *testing.T) {
	got, err := renderSection(t, "# T\n\n## A\n\n```lua\n"+
		"var.obj = {b = 2, a = {1, 2.5, \"x\"}, t = true, s = \"q\\\"<\"}\n"+
		"var.s = \"str\"\ng = {k = \"v\", n = 3}\ntricky = \"{{ args }}\"\nreply = \"R\"\nempty = {}\n"+
		"```\n\n{{args}} {{ reply }} {{ var.s }} {{ var.obj }} {{ var.obj.a }} {{ sys.section_name }} {{ sys.id }} "+
		"{{ g.k }} {{ g }} {{ tricky }} \\{{ x }} \\\\ \\} { } {{ empty }} {{ g.n }} {{ var.obj.t }}\n", "IN")
	if err != nil {
		t.Fatal(err)
	}
	want := `IN R str {"a":[1,2.5,"x"],"b":2,"s":"q\"<","t":true} [1,2.5,"x"] A 1 v {"k":"v","n":3} {{ args }} {{ x }} \ } { } {} 3 true`
	if got != want {
		t.Errorf("rendered\n%q\nwant\n%q", got, want)
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct{ lua, prose, want string }{
		{"", "a {{ reply }}", "[NilReply at byte 2]"},
		{"", "{{ item }}", "[NilItem at byte 0]"},
		{"local x = 1", "{{ x }}", "[UnknownNamespace at byte 0]"},
		{"var.a = {b = 1}", "{{ var.a.c }}", "[MissingKey at byte 0]"},
		{"var.a = {1}", "{{ var.a.1 }}", "[MissingKey at byte 0]"},
		{"g = {n = 1}", "{{ sys.nope }}", "[MissingKey at byte 0]"},
		{"function f() end", "{{ f }}", "[Serialize at byte 0]"},
		{"g = {f = function() end}", "{{ g }}", "[Serialize at byte 0]"},
		{"", "{{ args.x }}", "[NotATable at byte 0]"},
		{"", "{{ sys }}", "[BadPath at byte 0]"},
		{"", "{{ var. x }}", "[EmptySegment at byte 0]"},
		{"", "xy {{ var.x", "[Unclosed at byte 3]"},
	} {
		src := "# T\n\n## A\n\n"
		if tc.lua != "" {
			src += "```lua\n" + tc.lua + "\n```\n\n"
		}
		src += tc.prose + "\n"
		_, err := renderSection(t, src, "")
		re := AsRunError(err)
		if err == nil || re.Kind != KindSubstitution || !strings.HasSuffix(re.Msg, tc.want) {
			t.Errorf("%q: got %v, want Substitution ...%s", tc.prose, err, tc.want)
		}
	}
}

// TestRenderSysMessages: the engine's words for a sys key that does not
// exist, for an old form and for a key not set where it stands (the
// checker reports the first two with the same text, template.CheckKey).
func TestRenderSysMessages(t *testing.T) {
	for _, tc := range []struct{ prose, want string }{
		{"{{ sys.taskid }}", "placeholder `{{ sys.taskid }}`: sys has no field `taskid`: sys.taskid was replaced by sys.index (upstream 35ac8c9, 2026-08-19: a fanout arm's 1-based position is the integer sys.index; docs/migration.md); write `{{ sys.index }}` [MissingKey at byte 0]"},
		{"{{ sys.secton_name }}", "placeholder `{{ sys.secton_name }}`: sys has no field `secton_name`; did you mean `sys.section_name`? [MissingKey at byte 0]"},
		{"{{ tasks }}", "placeholder `{{ tasks }}`: `tasks` is not a global of this section (locals are invisible; set a global or use var.tasks): tasks[\"## Section\"] was replaced by \"## Section\" (upstream 5512829, 2026-08-19: control-flow targets are heading strings only; the tasks table was dropped; docs/migration.md) [UnknownNamespace at byte 0]"},
		{"{{ sys.index }}", "placeholder `{{ sys.index }}`: sys has no field `index` here (sys.index: integer: 1-based arm index; only inside fanout arms.) [MissingKey at byte 0]"},
	} {
		_, err := renderSection(t, "# T\n\n## A\n\n"+tc.prose+"\n", "")
		re := AsRunError(err)
		if err == nil || re.Kind != KindSubstitution || re.Msg != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.prose, err, tc.want)
		}
	}
}
