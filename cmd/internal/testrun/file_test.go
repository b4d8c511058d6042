package testrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const prompt = "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# P\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\ntools.bind(\"search\", \"web search capability\", \"Search\")\n```\n\n## Greet\n\nHello {{ args }}\n"

func diagsOf(t *testing.T, yml string) []string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.md"), []byte(prompt), 0o644)
	path := filepath.Join(dir, "p.test.yaml")
	f := Parse(path, []byte(yml))
	Validate(f, nil)
	var out []string
	for _, d := range f.Diags {
		out = append(out, strings.TrimPrefix(d.String(path), path+":"))
	}
	return out
}

func TestValidation(t *testing.T) {
	cases := []struct {
		name, yml string
		want      []string
	}{
		{"unknown keys", "cases:\n  - name: a\n    expct: {}\n    cassette: c.jsonl\nextra: 1\n",
			[]string{"3:5: error: unknown key `expct` in case (did you mean `expect`?)", "4:15: warning: no cassette at", "5:1: error: unknown key `extra` in test file"}},
		{"duplicate names", "cases:\n  - name: a\n    skip: true\n  - name: a\n    skip: true\n",
			[]string{"4:11: error: duplicate case name \"a\" (first at line 2)"}},
		{"bad matchers", "cases:\n  - name: a\n    skip: true\n    expect:\n      output: {regex: \"(\", equal: x}\n      error: {json_schema: {type: 12}}\n",
			[]string{"5:23: error: `regex` does not compile: missing closing )", "5:28: error: unknown key `equal` in matcher `expect.output` (did you mean `equals`?)", "6:28: error: `json_schema` is not a valid JSON Schema: invalid value for \"type\": \"12\""}},
		{"absent outside store", "cases:\n  - name: a\n    skip: true\n    expect: {output: {absent: true}}\n",
			[]string{"4:23: error: unknown key `absent` in matcher `expect.output`"}},
		{"absent with others", "cases:\n  - name: a\n    skip: true\n    expect: {store: {a.md: {absent: true, contains: x}}}\n",
			[]string{"4:28: error: `absent: true` cannot be combined"}},
		{"prompt facts", "cases:\n  - name: a\n    skip: true\n    section: \"## Nope\"\n    expect:\n      tools_called: [search, fetch]\n      sections: [\"## Greet\", \"### Greet\"]\n",
			[]string{"4:14: error: section: section heading `## Nope` not found; sections: ## Greet", "6:30: error: tools_called: the prompt declares no tool alias \"fetch\" (its aliases: search)", "7:30: error: sections: section heading `### Greet` not found"}},
		{"missing prompt", "prompt: other.md\ncases:\n  - name: a\n",
			[]string{"1:9: error: cannot read the prompt under test"}},
		{"output and error", "cases:\n  - name: a\n    skip: true\n    expect: {output: x, error: y}\n",
			[]string{"4:32: error: `expect.output` and `expect.error` exclude each other"}},
		{"not yaml", "cases: [\n", []string{"error: invalid YAML"}},
		{"no cases", "prompt: p.md\n", []string{"1:1: error: missing `cases:`"}},
		{"trajectory aliases", "cases:\n  - name: a\n    skip: true\n    expect:\n      tool_calls: [{tool: serch}, search]\n      never: [delete]\n",
			[]string{"5:27: error: tool_calls: the prompt declares no tool alias \"serch\" (its aliases: search; did you mean \"search\"?)", "6:15: error: never: the prompt declares no tool alias \"delete\""}},
		{"trajectory shapes", "cases:\n  - name: a\n    skip: true\n    expect:\n      order: random\n      tool_calls: [{tool: search, count: {min: 3, max: 1}, args: {\"a..b\": x}}, {args: {}}]\n      rounds: {max: -1, sections: {\"## Nope\": 2}}\n      tokens: {input: {most: 3}}\n",
			[]string{"5:14: error: `order` is `sequence`", "6:42: error: `count`: min 3 is greater than max 1", "6:67: error: argument path \"a..b\": empty key", "6:80: error: a `tool_calls` item needs `tool: ALIAS`", "7:21: error: `rounds.max` must be a whole number", "7:36: error: rounds.sections: section heading `## Nope` not found", "8:24: error: unknown key `most` in tokens.input"}},
		{"order without calls", "cases:\n  - name: a\n    skip: true\n    expect: {order: exact}\n",
			[]string{"4:21: error: `order` applies to `tool_calls`"}},
		{"pass rate", "cases:\n  - name: a\n    skip: true\n    pass_rate: 1.2\n  - name: b\n    skip: true\n    pass_rate: 0\n  - name: c\n    skip: true\n    pass_rate: 80%\n",
			[]string{"4:16: error: `pass_rate`: a pass rate is a share of the runs greater than 0 and at most 1", "7:16: error: `pass_rate`: a pass rate"}},
		{"bad store path", "cases:\n  - name: a\n    skip: true\n    store: {../x: y}\n", []string{"4:13: error: store path \"../x\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := diagsOf(t, c.yml)
			if len(got) != len(c.want) {
				t.Fatalf("got %d diags, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("diag %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestValidFileHasNoDiags(t *testing.T) {
	got := diagsOf(t, `cases:
  - name: greets
    input: "Ada"
    section: "## Greet"
    skip: "recorded later"
    store: {notes/a.md: "seed"}
    expect:
      output: {contains: [Ada, Hello], not_contains: Bob, regex: "^Hel"}
      store: {notes/a.md: {equals: seed}, notes/b.md: {absent: true}}
      tools_called: [search]
      sections: ["## Greet"]
`)
	if len(got) != 0 {
		t.Fatalf("diags: %v", got)
	}
}

func TestDefaultCassetteAndSlug(t *testing.T) {
	f := Parse(filepath.Join("ex", "greet.test.yaml"), []byte("cases:\n  - name: Greets by name!\n"))
	if len(f.Cases) != 1 || f.Cases[0].Cassette != filepath.Join("ex", "cassettes", "greet", "greets-by-name.jsonl") {
		t.Fatalf("%+v", f.Cases)
	}
	if f.Prompt != filepath.Join("ex", "greet.md") {
		t.Fatalf("prompt %s", f.Prompt)
	}
}

func TestMatcherCheck(t *testing.T) {
	f := Parse("m.test.yaml", []byte(`cases:
  - name: a
    expect:
      output:
        equals: "{\"n\": 2}"
        contains: "n"
        not_contains: "x"
        regex: "^\\{"
        json_schema: {type: object, properties: {n: {type: integer, maximum: 3}}, required: [n]}
`))
	if len(f.Diags) != 0 {
		t.Fatal(f.Diags)
	}
	m := f.Cases[0].Expect.Output
	if got := m.Check("output", `{"n": 2}`, true); len(got) != 0 {
		t.Fatalf("matching text: %v", got)
	}
	got := m.Check("output", `{"n": 5, "x": 1}`, true)
	var msgs []string
	for _, g := range got {
		msgs = append(msgs, g.Msg)
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{`output: want "{\"n\": 2}"`, `contains "x", which it must not`, "json_schema: at schema /properties/n: maximum: 5 is greater than 3"} {
		if !strings.Contains(all, w) {
			t.Errorf("lacks %q:\n%s", w, all)
		}
	}
	if got[0].Expected != `{"n": 2}` || got[0].Actual != `{"n": 5, "x": 1}` {
		t.Errorf("expected/actual %+v", got[0])
	}
	if got := m.Check("output", "not json {", true); !strings.Contains(got[len(got)-1].Msg, "is not JSON") {
		t.Errorf("not json: %v", got)
	}
}

// FuzzParse: any text gives a File and diagnostics with lines inside the
// text, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("cases:\n  - name: a\n    expect: {output: {regex: \"(\"}}\n"))
	f.Add([]byte("prompt: x.md\ncases: [{name: a, store: {a: b}, expect: {store: {a: {absent: true}}, json_schema: 1}}]\n"))
	f.Add([]byte("cases:\n  - name: a\n    expect:\n      output: {json_schema: {type: object, properties: {a: {$ref: '#/x'}}}}\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := Parse("x.test.yaml", data)
		// YAML also breaks lines at a lone \r.
		lines := strings.Count(string(data), "\n") + strings.Count(string(data), "\r") + 2
		for _, d := range file.Diags {
			if d.Line < 1 || d.Line > lines || d.Message == "" {
				t.Fatalf("diag %+v outside the text (%d lines)", d, lines)
			}
		}
		for _, c := range file.Cases {
			if c.Name == "" || c.Cassette == "" {
				t.Fatalf("case %+v", c)
			}
		}
	})
}

// TestJSONSchemaRefs: references inside the schema resolve; a reference
// to a file or URL is a schema error, never a read; failures name the
// schema location that failed.
func TestJSONSchemaRefs(t *testing.T) {
	f := Parse("m.test.yaml", []byte(`cases:
  - name: local
    expect:
      output:
        json_schema: {$defs: {small: {type: number, maximum: 2.5}}, type: array, items: {$ref: "#/$defs/small"}}
  - name: file
    expect:
      output: {json_schema: {$ref: "file:///etc/hostname"}}
  - name: url
    expect:
      output: {json_schema: '{"$ref": "http://127.0.0.1:1/schema.json"}'}
`))
	if len(f.Diags) != 2 {
		t.Fatalf("want 2 diags (file and url refs), got %v", f.Diags)
	}
	for i, d := range f.Diags {
		if !strings.Contains(d.Message, "is not loaded") || d.Line != 8+3*i {
			t.Errorf("diag %d: %+v", i, d)
		}
	}
	m := f.Cases[0].Expect.Output
	if got := m.Check("output", "[1, 2.5]", true); len(got) != 0 {
		t.Fatalf("matching text: %v", got)
	}
	got := m.Check("output", "[1, 7.25]", true)
	if len(got) != 1 || !strings.Contains(got[0].Msg, "at schema /$defs/small: maximum: 7.25 is greater than 2.5") {
		t.Fatalf("got %v", got)
	}
}
