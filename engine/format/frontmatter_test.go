package format

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestFrontmatterNested: nested mappings and sequences are re-indented
// two spaces a level, values, key order and comments unchanged; what the
// re-indenter does not recognise is left to the flat rules.
func TestFrontmatterNested(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"nested mappings",
			"input:\n    topic:\n        type: string\n        default:   x\n    n:\n        type: integer\noutput:\n      shape:    text\n",
			"input:\n  topic:\n    type: string\n    default: x\n  n:\n    type: integer\noutput:\n  shape: text\n"},
		{"sequences under keys",
			"tags:\n- a\n-   b\nmore:\n    -   c\nafter: 1\n",
			"tags:\n  - a\n  - b\nmore:\n  - c\nafter: 1\n"},
		{"mappings in sequence items",
			"tools:\n    -   name: search\n        desc:  finds\n        args:\n              q: string\n    - name: fetch\n",
			"tools:\n  - name: search\n    desc: finds\n    args:\n      q: string\n  - name: fetch\n"},
		{"comments move with their lines",
			"# head\ninput:\n    # about topic\n    topic: string # trailing\n\n    # about n\n    n: integer\n# foot\n",
			"# head\ninput:\n  # about topic\n  topic: string # trailing\n\n  # about n\n  n: integer\n# foot\n"},
		{"block scalars move with their key",
			"input:\n    topic:\n        description: |\n            line one\n              indented\n\n            line three\n        type: string\n",
			"input:\n  topic:\n    description: |\n      line one\n        indented\n\n      line three\n    type: string\n"},
		{"block scalar in an item",
			"steps:\n    - |\n        first\n    - >-\n        second\n",
			"steps:\n  - |\n    first\n  - >-\n    second\n"},
		{"flow collections on one line",
			"input:\n    tags:   [a, b]\n    opts: {x: 1}\n",
			"input:\n  tags: [a, b]\n  opts: {x: 1}\n"},
		{"already formatted", "name: x\ninput:\n  a:\n    - 1\n", "name: x\ninput:\n  a:\n    - 1\n"},
		// Left to the flat rules (one space after colons, trailing space).
		{"a multi-line flow sequence", "tags: [a,\n      b]\ninput:\n    a:  1\n", "tags: [a,\n      b]\ninput:\n  a: 1\n"},
		{"a plain scalar on two lines", "description:  one\n    two\ninput:\n      x: 1\n", "description: one\n    two\ninput:\n  x: 1\n"},
		{"a sequence in an item", "m:\n    - - a\n      - b\n", "m:\n    - - a\n      - b\n"},
		{"an explicit indentation indicator", "a:\n    b: |2\n          x\n", "a:\n  b: |2\n        x\n"},
		{"a quoted key", "a:\n    \"b c\": 1\n", "a:\n    \"b c\": 1\n"},
		{"a tab in the indentation", "a:\n\tb: 1\n", "a:\n\tb: 1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := formatFrontmatter("---\n" + c.in + "---\n")
			if want := "---\n" + c.want + "---\n"; got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			if again := formatFrontmatter(got); again != got {
				t.Errorf("not idempotent:\n%s", again)
			}
			if !sameYAMLText(c.in, strings.TrimSuffix(strings.TrimPrefix(got, "---\n"), "---\n")) {
				t.Errorf("the YAML changed")
			}
		})
	}
}

// TestFrontmatterNestedProof: a prompt with nested frontmatter formats,
// the whole-file proof holds, and fmt of the result changes nothing.
func TestFrontmatterNestedProof(t *testing.T) {
	src := "---\nname: nested\ndescription: >-\n        A prompt whose\n          frontmatter nests\npromptforge: 1\n# where it reads\ninput:\n      # the notes file\n      path:    notes.md   # relative to the store\n      description: |\n          The notes,\n\n            indented.\noutput:\n      path: out.md\n      description:   the draft\n---\n\n# T\n\nWrite.\n"
	want := "---\nname: nested\ndescription: >-\n  A prompt whose\n    frontmatter nests\npromptforge: 1\n# where it reads\ninput:\n  # the notes file\n  path: notes.md   # relative to the store\n  description: |\n    The notes,\n\n      indented.\noutput:\n  path: out.md\n  description: the draft\n---\n\n# T\n\nWrite.\n"
	got, err := Source("n.md", []byte(src), Default())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if err := Prove(parse.Parse("n.md", []byte(src)), parse.Parse("n.md", got)); err != nil {
		t.Fatal(err)
	}
	again, err := Source("n.md", got, Default())
	if err != nil || string(again) != string(got) {
		t.Fatalf("not idempotent: %v\n%s", err, again)
	}
}

// TestReindentYAMLRefuses: a re-indentation that would change the YAML is
// not made.
func TestReindentYAMLRefuses(t *testing.T) {
	for _, in := range []string{
		// A foot comment less indented than its mapping.
		"a:\n    b: 1\n  # between\nc: 2",
		// White space past a block scalar's indentation.
		"a:\n    b: |\n            x\n               \n            y",
		"a:\n    b: |+\n            x\n\n\nc: 1",
	} {
		out, ok := reindentYAML(strings.Split(in, "\n"))
		if ok && !sameYAMLText(in, strings.Join(out, "\n")) {
			t.Errorf("%q: the YAML changed:\n%s", in, strings.Join(out, "\n"))
		}
	}
}
