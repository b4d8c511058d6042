package run

import (
	"context"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestRunErrorMessages pins the located text of run errors that must name
// their line, their chunk and their true cause.
func TestRunErrorMessages(t *testing.T) {
	const head = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n" // ## A is line 9
	for _, c := range []struct {
		name, body string
		want       string
		not        string
	}{
		{
			name: "near-duplicate tools name the line of the second tool",
			body: "```lua\n" + // 11
				"tools.add_local(\"save_note\", \"save a note to the store\", {text = \"string\"}, function(a) return \"ok\" end)\n" +
				"tools.add_local(\"keep_note\", \"save a note to the store!\", {text = \"string\"}, function(a) return \"ok\" end)\n" + // 13
				"```\n\nWrite.\n",
			want: `p.md:13: tools "save_note" and "keep_note" available to this section are near-duplicates (similarity`,
		},
		{
			name: "a missing key of an object does not mention arrays",
			body: "```lua\nvar.user = {first = \"a\"}\n```\n\nHello {{ var.user.last }}.\n",
			want: "no key `last` (var.user.last is missing)",
			not:  "array",
		},
		{
			name: "a key of an array says so",
			body: "```lua\nvar.list = {\"a\", \"b\"}\n```\n\nHello {{ var.list.first }}.\n",
			want: "no key `first`: var.list is an array, and arrays cannot be indexed in a placeholder",
		},
		{
			name: "a key of a string says so",
			body: "```lua\nvar.s = \"text\"\n```\n\nHello {{ var.s.x }}.\n",
			want: "no key `x`: var.s is a string, not a table",
			not:  "array",
		},
		{
			name: "item.name with a table item gives the true reason",
			body: "```lua\nlocal r = fanout(\"### W\", {{name = \"x\"}})\nreturn r[1].text\n```\n\n### W\n\nHello {{ item.name }}.\n",
			want: "`item` cannot be indexed in a placeholder, even when it holds a table",
			not:  "is a string",
		},
		{
			name: "a table result names the chunk",
			body: "```lua\nreturn {1, 2}\n```\n", // the return is line 12
			want: "p.md:12: cannot return a table as a result: a chunk's result must be a string, number or boolean (nil goes on to the next block); return a string, or keep the table in var (Lua error in section `A` prologue)",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Input: "x"}
			_, err := Run(context.Background(), parse.Parse("p.md", []byte(head+c.body)), cfg)
			if err == nil {
				t.Fatal("the run succeeded")
			}
			got := AsRunError(err).Located("p.md")
			if !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
				t.Errorf("got  %s\nwant ~%s (without %q)", got, c.want, c.not)
			}
		})
	}
}

// TestFindSectionBareName: a name without its # markers is answered with
// the headings it may mean.
func TestFindSectionBareName(t *testing.T) {
	p := parse.Parse("p.md", []byte("---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## Draft\n\nx\n\n### Notes\n\ny\n"))
	for target, want := range map[string]string{
		"Draft": `did you mean "## Draft"?`,
		"notes": `did you mean "### Notes"?`,
		"Other": `e.g. "## Draft"; sections: ## Draft, ### Notes`,
	} {
		_, err := parse.FindSection(p, target)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "bare name") {
			t.Errorf("%s: %v, want ~%q", target, err, want)
		}
	}
}
