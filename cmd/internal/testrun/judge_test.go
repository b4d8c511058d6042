package testrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

func TestParseVerdict(t *testing.T) {
	for _, c := range []struct{ in, verdict, reason, err string }{
		{`{"reason": "ok", "verdict": "pass"}`, "pass", "ok", ""},
		{"Sure.\n```json\n{\"verdict\": \"fail\", \"reason\": \"no source\"}\n```", "fail", "no source", ""},
		{`{"verdict": 4, "reason": "mostly"}`, "4", "mostly", ""},
		{`{"verdict": true}`, "true", "", ""},
		{`{"reason": "x"}`, "", "", `no "verdict" key`},
		{`pass`, "", "", "no JSON object"},
	} {
		v, err := parseVerdict(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || v.Verdict != c.verdict || v.Reason != c.reason {
			t.Errorf("%q: %+v %v", c.in, v, err)
		}
	}
}

func TestPickJudge(t *testing.T) {
	cat := []gateway.Model{
		{ID: "writer-1", Description: "A careful general-purpose writing model for prose"},
		{ID: "grader-1", Description: "A strict grading model that evaluates answers against a rubric"},
	}
	for want, id := range map[string]string{"writer-1": "writer-1", "a strict grading model": "grader-1", "a model for prose writing": "writer-1"} {
		if got, err := pickJudge(cat, want); err != nil || got != id {
			t.Errorf("%q: %q %v, want %q", want, got, err, id)
		}
	}
	if _, err := pickJudge(cat, "submarine navigation"); err == nil {
		t.Errorf("an unmatched description picked a model")
	}
	if _, err := pickJudge(nil, "x"); err == nil {
		t.Errorf("an empty catalog picked a model")
	}
}

// TestJudgePromptDocumented: docs/testing.md shows the built-in judge
// prompt as it is.
func TestJudgePromptDocumented(t *testing.T) {
	// The repository root is the nearest folder above with go.mod.
	dir, _ := filepath.Abs(".")
	for !fileExists(filepath.Join(dir, "go.mod")) && filepath.Dir(dir) != dir {
		dir = filepath.Dir(dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "```\n"+DefaultJudgePrompt+"\n```") {
		t.Errorf("docs/testing.md does not show DefaultJudgePrompt verbatim")
	}
}
