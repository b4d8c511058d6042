//go:build unix

package testrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a named pipe at p, skipping the test where there are none.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
}

// within fails the test instead of hanging when f blocks.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked (before: a named pipe was opened and read)", what)
	}
}

// A test file whose prompt: and cassette: are a named pipe and a link to
// /dev/zero fails each case with the reader's message instead of
// blocking or filling memory.
func TestHostilePromptAndCassette(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "pipe.md"))
	mkfifo(t, filepath.Join(dir, "pipe.jsonl"))
	os.WriteFile(filepath.Join(dir, "p.md"), []byte(prompt), 0o644)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ yml, want string }{
		{"prompt: pipe.md\ncases:\n  - name: a\n    expect: {output: {contains: x}}\n", "is a named pipe, not a regular file; only regular files are read as a prompt"},
		{"cases:\n  - name: a\n    section: \"## Greet\"\n    cassette: pipe.jsonl\n    input: x\n    expect: {output: {contains: search}}\n", "is a named pipe, not a regular file; only regular files are read as a cassette"},
		{"cases:\n  - name: a\n    section: \"## Greet\"\n    cassette: zero.jsonl\n    input: x\n    expect: {output: {contains: search}}\n", "resolves to /dev/zero, outside"},
	} {
		path := filepath.Join(dir, "p.test.yaml")
		os.WriteFile(path, []byte(c.yml), 0o644)
		var msg string
		within(t, "test run", func() {
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			Validate(f, nil)
			rs := Run(context.Background(), []*File{f}, Options{Jobs: 1})
			msg = rs[0].Message()
		})
		if !strings.Contains(msg, c.want) {
			t.Errorf("case message %q lacks %q", msg, c.want)
		}
	}
	// The test file itself as a pipe.
	pipe := filepath.Join(dir, "q.test.yaml")
	mkfifo(t, pipe)
	within(t, "Load", func() {
		if _, err := Load(pipe); err == nil || !strings.Contains(err.Error(), "a named pipe") {
			t.Errorf("Load(pipe) = %v", err)
		}
	})
}

// Self-applying schemas are refused when the test file loads, with the
// cycle named; a recursive schema that goes down the value still works;
// a schema nested past MaxSchemaDepth is refused.
func TestSchemaCyclesAndDepth(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "hostile", "schema.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		6:  "(# → #)",
		9:  "(# → #)",
		13: "#/$defs/a → #/$defs/a/allOf/0 → #/$defs/b → #/$defs/b/anyOf/0 → #/$defs/a",
		17: "#/$defs/a → #/$defs/a/not → #/$defs/a",
	}
	if len(f.Diags) != len(want) {
		t.Fatalf("want %d diagnostics, got %v", len(want), f.Diags)
	}
	for _, d := range f.Diags {
		w, ok := want[d.Line]
		if !ok || !strings.Contains(d.Message, w) || !strings.Contains(d.Message, "refers to itself without going into the value") {
			t.Errorf("line %d: %q (want %q)", d.Line, d.Message, w)
		}
	}
	tree := f.Cases[4].Expect.Output
	if got := tree.Check("output", `{"kids": [{"kids": []}, {}]}`, true); len(got) != 0 {
		t.Errorf("tree schema: %v", got)
	}
	if got := tree.Check("output", `{"kids": [{"kids": 3}]}`, true); len(got) != 1 {
		t.Errorf("tree schema accepted a bad value: %v", got)
	}

	deep := strings.Repeat("{not: ", MaxSchemaDepth+1) + "{}" + strings.Repeat("}", MaxSchemaDepth+1)
	g := Parse("d.test.yaml", []byte("cases:\n  - name: deep\n    expect:\n      output: {json_schema: "+deep+"}\n"))
	if len(g.Diags) != 1 || !strings.Contains(g.Diags[0].Message, "nests more than 64 levels") {
		t.Errorf("deep schema: %v", g.Diags)
	}
}
