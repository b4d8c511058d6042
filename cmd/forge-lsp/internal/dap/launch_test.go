package dap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	godap "github.com/google/go-dap"
)

func TestLaunchStoreSectionTrace(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "s.md")
	writeFile(t, prog, "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nreturn \"a\"\n```\n\n## B\n\n"+
		"```lua\nstore.append(\"notes/n.txt\", \"+\" .. args)\nreturn store.read(\"notes/n.txt\")\n```\n")
	seed := filepath.Join(dir, "seed")
	if err := os.MkdirAll(filepath.Join(seed, "notes"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(seed, "notes", "n.txt"), "seeded")
	tr := filepath.Join(dir, "run.jsonl")
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Section: "## B", Input: "x", Store: seed, Trace: tr}, []int{17}, nil)
	_, f := c.at("breakpoint", 17)
	st := c.scope(f.Id, "Store")
	if st["notes/n.txt"].Value != `"seeded"` || st["notes/n.txt"].Type != "6 bytes" {
		t.Errorf("seeded store: %+v", st)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	if out, code := c.finish(); out != "seeded+x\n" || code != 0 {
		t.Errorf("end: %q %d", out, code)
	}
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{`"ev":"run.start"`, `"ev":"store.write"`, `"storePath":"notes/n.txt"`, `"ev":"run.end"`, `"reply":"seeded+x"`} {
		if !strings.Contains(text, want) {
			t.Errorf("trace lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, `"address":"## A"`) {
		t.Errorf("section B ran alone, but the trace has A:\n%s", text)
	}
}

func TestLaunchErrors(t *testing.T) {
	c := start(t, Options{})
	c.call("initialize", map[string]any{"adapterID": "promptforge"})
	if msg := c.callErr("launch", map[string]any{}); !strings.Contains(msg, `"program" is required`) {
		t.Errorf("no program: %q", msg)
	}
	if msg := c.callErr("launch", map[string]any{"program": filepath.Join(t.TempDir(), "missing.md")}); !strings.Contains(msg, "missing.md") {
		t.Errorf("missing program: %q", msg)
	}
	// A section that does not exist: the run ends at once with exit 2.
	prog := filepath.Join(t.TempDir(), "p.md")
	writeFile(t, prog, "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nreturn 1\n```\n")
	c.call("launch", LaunchArgs{Program: prog, Section: "## Nope"})
	c.call("configurationDone", nil)
	out, code := c.finish()
	if code != 2 || !strings.Contains(out, "Nope") {
		t.Errorf("unknown section: %q exit %d", out, code)
	}
	// Markdown that is not a prompt: exit 2, as `check` and `run` give.
	md := filepath.Join(t.TempDir(), "n.md")
	writeFile(t, md, "# Just markdown\n")
	c2 := start(t, Options{})
	c2.launch(LaunchArgs{Program: md}, nil, nil)
	if out, code := c2.finish(); code != 2 || !strings.HasPrefix(out, md+":1: not a promptforge prompt") {
		t.Errorf("not a prompt: %q exit %d", out, code)
	}
}

func TestStopOnEntryWithSection(t *testing.T) {
	prog, cas := fixture(t)
	c := start(t, Options{})
	c.launch(LaunchArgs{Program: prog, Section: "## Next", Replay: cas, Execution: execution, StopOnEntry: true}, nil, nil)
	_, f := c.at("entry", 25)
	if f.Name != "## Next" {
		t.Errorf("entry frame %q", f.Name)
	}
	c.call("continue", godap.ContinueArguments{ThreadId: mainThread})
	// A section run starts with reply nil, so ## Last fails on it.
	if out, code := c.finish(); !strings.HasPrefix(out, prog+":47: ") || !strings.Contains(out, "nil") || code != 1 {
		t.Errorf("end: %q %d", out, code)
	}
}
