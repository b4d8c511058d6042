package testrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// repo makes a repository (a folder with .git) holding p.md, and a
// victim folder beside it.
func repo(t *testing.T) (dir, victim string) {
	t.Helper()
	top := t.TempDir()
	dir, victim = filepath.Join(top, "repo"), filepath.Join(top, "victim")
	for _, d := range []string{filepath.Join(dir, ".git"), victim} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(dir, "p.md"), []byte(prompt), 0o644)
	return dir, victim
}

// Cassette and prompt paths that leave the test file's repository, by
// ../ or through a link, are errors when the file is validated (so
// `check` reports them), and --record writes nothing outside (before:
// only absolute paths were refused).
func TestPathsStayInsideRepository(t *testing.T) {
	dir, victim := repo(t)
	os.WriteFile(filepath.Join(victim, "v.md"), []byte(prompt), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, "cassettes")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(victim, "v.md"), filepath.Join(dir, "linked.md")); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "q.md"), []byte(prompt), 0o644)
	for _, c := range []struct{ name, yml, want string }{
		{"dotdot", "prompt: ../p.md\ncases:\n  - name: a\n    section: \"## Greet\"\n    cassette: ../../victim/important.txt\n    expect: {output: {contains: x}}\n", "cassette " + filepath.ToSlash(victim) + "/important.txt resolves to " + filepath.ToSlash(victim) + "/important.txt, outside " + filepath.ToSlash(dir)},
		{"default through a link", "prompt: ../p.md\ncases:\n  - name: a\n    section: \"## Greet\"\n    cassette: ../cassettes/a.jsonl\n    expect: {output: {contains: x}}\n", "resolves to " + filepath.ToSlash(victim) + "/a.jsonl, outside"},
		{"prompt through a link", "prompt: ../linked.md\ncases:\n  - name: a\n    expect: {output: {contains: x}}\n", "the prompt under test " + filepath.ToSlash(dir) + "/linked.md resolves to " + filepath.ToSlash(victim) + "/v.md, outside"},
	} {
		path := filepath.Join(sub, "q.test.yaml")
		os.WriteFile(path, []byte(c.yml), 0o644)
		f, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		Validate(f, nil)
		found := false
		for _, d := range f.Diags {
			found = found || (d.Code == "test-path" && d.Severity == SevError && strings.Contains(d.Message, c.want))
		}
		if !found {
			t.Errorf("%s: no test-path error containing %q in %v", c.name, c.want, f.Diags)
		}
		// The runner refuses too, even for a file nobody validated.
		srv := gatewaytest.New(t, "k")
		srv.Enqueue(gatewaytest.Text("x"))
		Run(context.Background(), []*File{f}, Options{Mode: Record, Gateway: srv.Config(), Jobs: 1})
		if ents, _ := os.ReadDir(victim); len(ents) != 1 {
			t.Errorf("%s: the recording wrote outside the repository: %v", c.name, ents)
		}
	}
}

// Two cases sharing one cassette record under -j 2 without failing
// (before: both wrote CASSETTE.recording and one lost its file).
func TestSharedCassetteRecordsWithoutRace(t *testing.T) {
	dir, _ := repo(t)
	path := filepath.Join(dir, "p.test.yaml")
	os.WriteFile(path, []byte("cases:\n  - name: a\n    section: \"## Greet\"\n    input: x\n    cassette: shared.jsonl\n    expect: {output: {contains: hi}}\n  - name: b\n    section: \"## Greet\"\n    input: x\n    cassette: shared.jsonl\n    expect: {output: {contains: hi}}\n"), 0o644)
	srv := gatewaytest.New(t, "k")
	srv.Catalog = []gateway.Model{{ID: "m", Description: "general assistant model", Context: 8192, Thinking: "never", ToolDialect: "openai"}}
	srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("hi") }
	for range 5 {
		f, _ := Load(path)
		rs := Run(context.Background(), []*File{f}, Options{Mode: Record, Gateway: srv.Config(), Jobs: 2})
		for _, r := range rs {
			if r.Status != Pass {
				t.Fatalf("%s: %s", r.Case.Name, r.Message())
			}
		}
		if ents, _ := filepath.Glob(filepath.Join(dir, "*.recording")); len(ents) != 0 {
			t.Fatalf("left temporary files: %v", ents)
		}
	}
	// And the recording replays.
	f, _ := Load(path)
	for _, r := range Run(context.Background(), []*File{f}, Options{Jobs: 2}) {
		if r.Status != Pass {
			t.Errorf("replay %s: %s", r.Case.Name, r.Message())
		}
	}
}

// A link planted in the trace folder does not carry a failing case's
// trace outside it.
func TestTraceStaysInsideTraceDir(t *testing.T) {
	dir, victim := repo(t)
	traces := filepath.Join(dir, "traces")
	os.MkdirAll(traces, 0o755)
	if err := os.Symlink(victim, filepath.Join(traces, "p")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p.test.yaml")
	os.WriteFile(path, []byte("cases:\n  - name: a\n    section: \"## Greet\"\n    expect: {output: {contains: nope}}\n"), 0o644)
	f, _ := Load(path)
	rs := Run(context.Background(), []*File{f}, Options{Jobs: 1, TraceDir: traces})
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Fatalf("trace written through the link: %v", ents)
	}
	if msg := rs[0].Message(); !strings.Contains(msg, "cannot keep the trace: trace") || !strings.Contains(msg, "outside "+filepath.ToSlash(traces)) {
		t.Errorf("message %q", msg)
	}
}
