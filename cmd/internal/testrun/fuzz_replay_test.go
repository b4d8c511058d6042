package testrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fuzzTools is a forge-tools.json whose only tool leaves a marker when it
// runs: a replay must never run it.
const fuzzTools = `{"tools":[{"name":"wc","description":"Count the words in a text.","parameters":{"type":"object"},"trust":"trusted","command":["sh","-c","echo ran > ran.txt; echo 3"]}]}`

const fuzzPrompt = "---\nname: p\ndescription: d\npromptforge: 1\n---\n\n# P\n\n```lua\nmodels.default(\"m\", \"general assistant model\")\ntools.bind(\"wc\", \"count the words of a text\")\ntools.always(\"wc\")\n```\n\n## Greet\n\nHello {{ args }}\n"

// FuzzReplayCase: any test file and any cassette, replayed, end in a
// result per case (or diagnostics), never a crash, a hang or a write
// outside the repository, and never run the workspace's command. The
// output is also checked against every matcher the file declares.
func FuzzReplayCase(f *testing.F) {
	f.Add([]byte("cases:\n  - name: a\n    section: \"## Greet\"\n    input: x\n    cassette: c.jsonl\n    expect: {output: {contains: hi}}\n"),
		[]byte("{\"cassette\":\"forge-lsp\",\"version\":1}\n{\"seq\":1,\"method\":\"POST\",\"endpoint\":\"chat/completions\",\"request\":null,\"status\":200,\"response\":\"{}\"}\n"), "hi")
	f.Add([]byte("cases:\n  - name: a\n    cassette: c.jsonl\n    expect: {output: {json_schema: {$ref: \"#\"}}}\n"), []byte("{\"cassette\":\"forge-lsp\",\"version\":1}\n"), "{}")
	f.Add([]byte("cases:\n  - name: a\n    cassette: ../out.jsonl\n    expect: {output: {json_schema: {type: array, items: {$ref: \"#\"}}}}\n"), []byte(""), "[[[]]]")
	f.Add([]byte("cases:\n  - name: a\n    section: \"## Greet\"\n    cassette: c.jsonl\n    expect: {tools_called: [wc]}\n"),
		[]byte("{\"cassette\":\"forge-lsp\",\"version\":1}\n{\"seq\":1,\"method\":\"TOOL\",\"endpoint\":\"tool/wc\",\"request\":{\"tool\":\"wc\",\"arguments\":\"{}\"},\"status\":200,\"response\":\"{\\\"text\\\":\\\"3\\\"}\"}\n"), "3")
	f.Fuzz(func(t *testing.T, yml, cassette []byte, output string) {
		top := t.TempDir()
		dir := filepath.Join(top, "repo")
		os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
		os.WriteFile(filepath.Join(dir, "p.md"), []byte(fuzzPrompt), 0o644)
		os.WriteFile(filepath.Join(dir, "forge-tools.json"), []byte(fuzzTools), 0o644)
		os.WriteFile(filepath.Join(dir, "c.jsonl"), cassette, 0o644)
		path := filepath.Join(dir, "p.test.yaml")
		os.WriteFile(path, yml, 0o644)

		file, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		Validate(file, nil)
		for _, c := range file.Cases {
			for _, m := range []*Matcher{c.Expect.Output, c.Expect.Error} {
				if m != nil {
					m.Check("output", output, true)
				}
			}
		}
		for _, d := range file.Diags {
			if d.Severity == SevError {
				return // the runner is given only files without errors
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rs := Run(ctx, []*File{file}, Options{Jobs: 2, Timeout: 5 * time.Second})
		for _, r := range rs {
			if r.Status == "" || (r.Status == Fail && r.Message() == "") {
				t.Fatalf("case %q: status %q, message %q", r.Case.Name, r.Status, r.Message())
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
			t.Fatal("a replay ran the workspace command")
		}
		ents, _ := os.ReadDir(top)
		if len(ents) != 1 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("wrote outside the repository: %s", strings.Join(names, ", "))
		}
	})
}
