package mcp

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func TestMainRefusals(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "prompts.toml")
	writeFile(t, bad, "[server]\nbnd = \"x\"\n")
	writeFile(t, filepath.Join(dir, "gw.toml"), "[[modle]]\n")
	empty := filepath.Join(dir, "empty")
	writeFile(t, filepath.Join(empty, "notes.md"), "# not a prompt\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{filepath.Join(dir, "missing.toml")}, 2, "no such file"},
		{[]string{bad}, 2, `prompts.toml:2: unknown key "server.bnd"`},
		{[]string{"--stdio", "--http", "x:1", bad}, 2, "usage: forge-lsp mcp"},
		{[]string{"--stdio", empty}, 1, "no prompts resolved"},
		{[]string{"--stdio", "--gateway-config", filepath.Join(dir, "gw.toml"), empty}, 2, "gw.toml:1:3: unknown key modle"},
	} {
		var out, errb bytes.Buffer
		code := Main(tc.args, "test", strings.NewReader(""), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}

func TestMainHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"--help"}, "test", strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "usage: forge-lsp mcp") || !strings.Contains(out.String(), "-stdio") || errb.Len() != 0 {
		t.Fatalf("help: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestMainStdioFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "echo.md"), echoPrompt)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_prompt","arguments":{"prompt":"echo","args":"from stdio"}}}`,
	}, "\n") + "\n"
	// stdin stays open until the answer is out, as a harness keeps it
	// (its end cancels the calls still going).
	pr, pw := io.Pipe()
	go func() { _, _ = io.WriteString(pw, in) }()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- Main([]string{"--stdio", dir}, "test", pr, &out, &errb) }()
	waitFor(t, "the run_prompt answer", func() bool { return strings.Contains(out.String(), `"id":2`) })
	pw.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"value":"FROM STDIO"`) || !strings.Contains(out.String(), `"name":"forge-lsp"`) {
		t.Fatalf("stdout: %s", out.String())
	}
}
