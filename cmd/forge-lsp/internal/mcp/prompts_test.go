package mcp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPPrompts: the catalog's healthy prompts are MCP prompts with
// args (and input_text for a declared input file) as arguments; getting
// one runs it and answers its value as a user message; a failing run is
// an error; a reload that adds a prompt notifies list_changed, one that
// breaks a prompt takes it out.
func TestMCPPrompts(t *testing.T) {
	f := newFixture(t, map[string]string{"echo.md": echoPrompt, "summarize.md": summarizePrompt}, "")
	changed := make(chan struct{}, 8)
	cs := f.connect(&sdk.ClientOptions{PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) { changed <- struct{}{} }})
	ctx := context.Background()
	if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || !caps.Prompts.ListChanged {
		t.Fatalf("prompts capability %+v", caps.Prompts)
	}
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*sdk.Prompt{}
	for _, p := range list.Prompts {
		got[p.Name] = p
	}
	if len(got) != 2 || got["echo"].Description != "Return the input upper-cased with no model call" {
		t.Fatalf("prompts/list: %s", mustJSON(t, list))
	}
	if a := got["echo"].Arguments; len(a) != 1 || a[0].Name != "args" {
		t.Fatalf("echo's arguments %s", mustJSON(t, a))
	}
	if a := got["summarize"].Arguments; len(a) != 2 || a[1].Name != "input_text" || !strings.Contains(a[1].Description, "in/doc.md: the document") {
		t.Fatalf("summarize's arguments %s", mustJSON(t, a))
	}
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "echo", Arguments: map[string]string{"args": "quiet words"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Messages[0].Content.(*sdk.TextContent).Text != "QUIET WORDS" {
		t.Fatalf("prompts/get: %s", mustJSON(t, res))
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "echo", Arguments: map[string]string{"nope": "x"}}); err == nil || !strings.Contains(err.Error(), "takes the arguments args and input_text") {
		t.Fatalf("an unknown argument: %v", err)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "missing"}); err == nil {
		t.Fatal("getting an unknown prompt succeeded")
	}

	writeFile(t, filepath.Join(f.dir, "prompts", "fresh.md"), strings.Replace(echoPrompt, "name: echo", "name: fresh", 1))
	f.srv.Reload()
	waitChanged(t, changed)
	list, _ = cs.ListPrompts(ctx, nil)
	if len(list.Prompts) != 3 {
		t.Fatalf("after adding a file: %s", mustJSON(t, list))
	}
	writeFile(t, filepath.Join(f.dir, "prompts", "echo.md"), strings.Replace(echoPrompt, "```lua\nreturn", "```lua\nreturn )(", 1))
	f.srv.Reload()
	waitChanged(t, changed)
	list, _ = cs.ListPrompts(ctx, nil)
	for _, p := range list.Prompts {
		if p.Name == "echo" {
			t.Fatalf("a broken prompt is still offered: %s", mustJSON(t, list))
		}
	}
}

func waitChanged(t *testing.T, changed <-chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/prompts/list_changed after the reload")
	}
}
