package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunTraceAndVerbose(t *testing.T) {
	p := writePrompt(t, "## A\n\n```lua\nlog(\"note\")\nstore.write(\"a.txt\", args)\nreturn args\n```\n")
	tf := filepath.Join(t.TempDir(), "run.jsonl")
	code, out, errs := runCLI(t, "--trace", tf, "--verbose", p, "hi")
	if code != 0 || out != "hi\n" {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	for _, want := range []string{p + ":9: enter ## A\n", p + ":12: log: note\n", p + ":13: store write a.txt (2 bytes)\n", "reply \"hi\""} {
		if !strings.Contains(errs, want) {
			t.Errorf("--verbose lacks %q:\n%s", want, errs)
		}
	}
	data, err := os.ReadFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var evs []string
	for _, l := range lines {
		var e struct {
			Ev   string `json:"ev"`
			Line int    `json:"line"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		evs = append(evs, e.Ev)
	}
	want := "run.start section.enter section.exit section.enter block log store.write section.exit run.end"
	if strings.Join(evs, " ") != want {
		t.Fatalf("trace events %v, want %s", evs, want)
	}
	if !strings.Contains(lines[len(lines)-1], `"reply":"hi"`) {
		t.Errorf("run.end: %s", lines[len(lines)-1])
	}
	// A failed run ends its trace with the error and its line.
	bad := writePrompt(t, "## A\n\n```lua\nerror(\"boom\")\n```\n")
	if code, _, _ := runCLI(t, "--trace", tf, bad); code != 1 {
		t.Fatalf("bad run: %d", code)
	}
	data, _ = os.ReadFile(tf)
	lines = strings.Split(strings.TrimSpace(string(data)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"ev":"run.end"`) || !strings.Contains(last, `"line":12`) || !strings.Contains(last, "boom") {
		t.Errorf("run.end of a failed run: %s", last)
	}
}

func TestRunStoreSeed(t *testing.T) {
	seed := t.TempDir()
	if err := os.MkdirAll(filepath.Join(seed, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seed, "docs", "a.txt"), []byte("seeded"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := writePrompt(t, "## A\n\n```lua\nreturn store.read(\"docs/a.txt\") .. \" \" .. #store.glob(\"**\")\n```\n")
	if code, out, errs := runCLI(t, "--store", seed, p); code != 0 || out != "seeded 1\n" {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	missing := filepath.Join(seed, "nope")
	if code, _, errs := runCLI(t, "--store", missing, p); code != 2 || !strings.Contains(errs, "--store") || !strings.Contains(errs, "nope") {
		t.Errorf("missing folder: %d %q", code, errs)
	}
}
