package flow_test

import (
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/flow"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

const walkPrompt = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n" +
	"## Main\n\n```lua\nif args == \"x\" then\n  jump(\"## Target\")\nend\nlocal r = fanout(\"### Worker\", {\"a\"})\n```\n\n" +
	"### Worker\n\n```lua\nreturn item\n```\n\n" +
	"### Child\n\nNotes.\n\n" +
	"## Unknown\n\n```lua\nreturn reply\n```\n\n" +
	"## After\n\nOnly if Unknown returned nil.\n\n" +
	"## Target\n\n---\n\nJumped to.\n\n" +
	"## Off\n\n---\n\nNever.\n"

func sections(p *parse.Prompt) map[string]*parse.Section {
	out := map[string]*parse.Section{}
	var walk func([]*parse.Section)
	walk = func(ss []*parse.Section) {
		for _, s := range ss {
			out[s.Name] = s
			walk(s.Children)
		}
	}
	walk(p.Sections)
	return out
}

func TestViews(t *testing.T) {
	p := parse.Parse("t.md", []byte(walkPrompt))
	if len(p.Errors) > 0 {
		t.Fatal(p.Errors[0].Message)
	}
	r := flow.Analyze(program.Build(p))
	s := sections(p)
	for _, tc := range []struct {
		name            string
		known, may, arm bool
	}{
		{"Main", true, true, false},
		{"Worker", true, true, true},
		{"Child", false, false, false},
		{"Unknown", true, true, false},
		{"After", false, true, false}, // `return reply` may be nil
		{"Target", true, true, false},
		{"Off", false, false, false},
	} {
		sec := s[tc.name]
		if got := r.Known.Entered.Has(sec); got != tc.known {
			t.Errorf("%s: Known.Entered = %v, want %v", tc.name, got, tc.known)
		}
		if got := r.May.Entered.Has(sec); got != tc.may {
			t.Errorf("%s: May.Entered = %v, want %v", tc.name, got, tc.may)
		}
		if got := r.Known.Arm.Has(sec); got != tc.arm {
			t.Errorf("%s: Known.Arm = %v, want %v", tc.name, got, tc.arm)
		}
	}
	if r.Known.Walked.Has(s["Worker"]) {
		t.Error("Worker is entered only as an arm")
	}
	if !r.Dead(s["Off"].Blocks[0].Span()) || r.Dead(s["Target"].Blocks[0].Span()) {
		t.Error("Dead: Off should be dead, Target not")
	}
}

func TestCycleAndStore(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n" +
		"## A\n\n```lua\nstore.write(\"notes/\" .. args, \"x\")\nlog(\"a\")\n```\n\n" +
		"## B\n\n```lua\njump(\"## A\")\n```\n"
	p := parse.Parse("t.md", []byte(src))
	r := flow.Analyze(program.Build(p))
	if len(r.Cycles) != 1 || len(r.Cycles[0].Sections) != 2 {
		t.Fatalf("cycles = %+v, want A -> B", r.Cycles)
	}
	if !r.MayWrite("notes/today.md") || r.MayWrite("other.md") {
		t.Error("MayWrite: notes/ prefix writes notes/today.md and nothing else")
	}
	// A condition around the jump gives the cycle an exit.
	p = parse.Parse("t.md", []byte(src[:len(src)-len("jump(\"## A\")\n```\n")]+"if var.again then jump(\"## A\") end\n```\n"))
	if r := flow.Analyze(program.Build(p)); len(r.Cycles) != 0 {
		t.Errorf("conditional jump: cycles = %+v", r.Cycles)
	}
}

// pcall(jump, ...) jumps and pcall(execute, ...) executes
// (docs/language.md#errors-across-calls), and a target held in a local is followed.
func TestPcallTransfers(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n" +
		"## Main\n\n```lua\nlocal ok = pcall(execute, \"## Chain\", \"x\")\nlocal to = \"## Jumped\"\npcall(jump, to)\n```\n\n" +
		"## Skipped\n\nNever: Main jumps.\n\n" +
		"## Chain\n\n---\n\n```lua\nreturn \"c\"\n```\n\n" +
		"## Jumped\n\n---\n\n```lua\nreturn \"j\"\n```\n"
	p := parse.Parse("t.md", []byte(src))
	if len(p.Errors) > 0 {
		t.Fatal(p.Errors[0].Message)
	}
	r := flow.Analyze(program.Build(p))
	s := sections(p)
	for name, want := range map[string]bool{"Main": true, "Chain": true, "Jumped": true, "Skipped": false} {
		if got := r.Known.Entered.Has(s[name]); got != want {
			t.Errorf("%s: Known.Entered = %v, want %v", name, got, want)
		}
		if got := r.May.Entered.Has(s[name]); got != want {
			t.Errorf("%s: May.Entered = %v, want %v", name, got, want)
		}
	}
}
