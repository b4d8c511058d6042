package mcp

import (
	"strings"
	"testing"
)

// TestOutlinePrompt: outline_prompt answers with the editor's outline
// (the language server's document symbols) and 1-based lines.
func TestOutlinePrompt(t *testing.T) {
	f := newFixture(t, map[string]string{"ask.md": askPrompt, "notes.md": "# Notes\n\nNot a prompt.\n"}, "")
	cs := f.connect(nil)
	var out struct {
		Path    string         `json:"path"`
		Outline []OutlineEntry `json:"outline"`
	}
	call(t, cs, "outline_prompt", map[string]any{"path": "ask.md"}, &out)
	if len(out.Outline) != 3 {
		t.Fatalf("outline of ask.md: %+v", out.Outline)
	}
	fm, h1, sec := out.Outline[0], out.Outline[1], out.Outline[2]
	if fm.Kind != "frontmatter" || fm.Line != 1 || fm.EndLine != 5 || len(fm.Children) != 3 || fm.Children[0].Name != "name" || fm.Children[0].Detail != "ask" {
		t.Errorf("frontmatter: %+v", fm)
	}
	if h1.Kind != "h1" || h1.Name != "# Ask" || h1.Line != 7 || len(h1.Children) != 1 ||
		h1.Children[0].Kind != "model" || h1.Children[0].Name != "m" || h1.Children[0].Line != 10 {
		t.Errorf("H1: %+v", h1)
	}
	if sec.Kind != "section" || sec.Name != "## Answer" || sec.Line != 13 || sec.EndLine != 15 {
		t.Errorf("section: %+v", sec)
	}
	res, text := call(t, cs, "outline_prompt", map[string]any{"path": "notes.md"}, nil)
	if !res.IsError || !strings.Contains(text, "not a PromptForge prompt") {
		t.Errorf("a Markdown file that is not a prompt: %s", text)
	}
}
