package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

const hdr = "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n"

func writePrompt(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p.md")
	if err := os.WriteFile(p, []byte(hdr+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runCmd(context.Background(), args, strings.NewReader("from stdin"), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunExitCodes(t *testing.T) {
	ok := writePrompt(t, "## A\n\n```lua\nlog(\"note\")\nreturn args\n```\n")
	code, out, errs := runCLI(t, ok, "hello")
	if code != 0 || out != "hello\n" || errs != "Lua: note\n" {
		t.Errorf("success: code %d out %q err %q", code, out, errs)
	}
	if code, out, _ := runCLI(t, ok, "-"); code != 0 || out != "from stdin\n" {
		t.Errorf("stdin input: %d %q", code, out)
	}
	bad := writePrompt(t, "## A\n\n```lua\nlocal x = 1\nerror(\"boom\")\n```\n")
	code, out, errs = runCLI(t, bad)
	// The location is given once: not again as Lua's chunk position.
	if code != 1 || out != "" || errs != bad+":13: boom (Lua error in section `A` prologue)\n" {
		t.Errorf("run error: code %d out %q err %q", code, out, errs)
	}
	notPrompt := filepath.Join(t.TempDir(), "n.md")
	os.WriteFile(notPrompt, []byte("# Just markdown\n"), 0o600)
	if code, out, errs := runCLI(t, notPrompt); code != 2 || out != "" || !strings.HasPrefix(errs, notPrompt+":1: not a promptforge prompt") {
		t.Errorf("not a prompt: %d %q %q", code, out, errs)
	}
	if code, _, _ := runCLI(t); code != 2 {
		t.Errorf("no args: %d", code)
	}
	if code, _, _ := runCLI(t, "--nope", ok); code != 2 {
		t.Errorf("bad flag: %d", code)
	}
	if code, _, _ := runCLI(t, filepath.Join(t.TempDir(), "missing.md")); code != 2 {
		t.Errorf("missing file: %d", code)
	}
	if code, _, errs := runCLI(t, ok, "--section", "## Nope"); code != 2 || !strings.Contains(errs, "not found") {
		t.Errorf("bad section: %d %q", code, errs)
	}
	if code, _, _ := runCLI(t, ok, "--record", "a", "--replay", "b"); code != 2 {
		t.Errorf("record+replay: %d", code)
	}
}

// stdin input loses one trailing line ending, as a line read by jq -R.
func TestRunStdinInput(t *testing.T) {
	ok := writePrompt(t, "## A\n\n```lua\nreturn \"[\" .. args .. \"]\"\n```\n")
	for in, want := range map[string]string{
		"hello\n":      "[hello]\n",
		"hello\r\n":    "[hello]\n",
		"two\nlines\n": "[two\nlines]\n",
		"blank\n\n":    "[blank\n]\n",
		"no newline":   "[no newline]\n",
		"":             "[]\n",
	} {
		var out, errb bytes.Buffer
		code := runCmd(context.Background(), []string{ok, "-"}, strings.NewReader(in), &out, &errb)
		if code != 0 || out.String() != want {
			t.Errorf("stdin %q: %d %q %q, want %q", in, code, out.String(), errb.String(), want)
		}
	}
}

func TestRunSectionFlag(t *testing.T) {
	p := writePrompt(t, "## A\n\n```lua\nreturn \"a\"\n```\n\n## B\n\n---\n\n### C\n\n```lua\nreply = \"c:\" .. args\n```\n")
	code, out, errs := runCLI(t, "--section", "### C", p, "in")
	if code != 0 || out != "c:in\n" {
		t.Errorf("code %d out %q err %q", code, out, errs)
	}
}

func TestStoreDump(t *testing.T) {
	p := writePrompt(t, "## A\n\n```lua\nstore.write(\"a/b.txt\", \"AB\")\nstore.write(\"top\", \"T\")\nerror(\"after writing\")\n```\n")
	dir := filepath.Join(t.TempDir(), "dump")
	code, _, errs := runCLI(t, p, "--store-dump", dir)
	if code != 1 {
		t.Fatalf("code %d (%s)", code, errs)
	}
	// Dumped after the failed run, owner-only.
	for path, want := range map[string]string{"a/b.txt": "AB", "top": "T"} {
		full := filepath.Join(dir, filepath.FromSlash(path))
		b, err := os.ReadFile(full)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", path, b, err)
		}
		fi, _ := os.Stat(full)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", path, fi.Mode())
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a")); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestStoreDumpRefusesSymlinks(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "a")); err != nil {
		t.Skip("no symlinks:", err)
	}
	st := store.New()
	if err := st.Write("a/evil.txt", "x"); err != nil {
		t.Fatal(err)
	}
	if err := DumpStore(st, dir, true); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "evil.txt")); err == nil {
		t.Error("wrote through the link")
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := DumpStore(st, link, false); err == nil {
		t.Error("followed a symlinked dump dir")
	}
	// A link at the file's own place is replaced, never written through.
	dir2 := t.TempDir()
	target := filepath.Join(outside, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	os.Symlink(target, filepath.Join(dir2, "f"))
	st2 := store.New()
	st2.Write("f", "new")
	if err := DumpStore(st2, dir2, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("wrote through a file link: %q", b)
	}
}

// runChildEnv makes TestRunChild act as `forge-lsp run`.
const runChildEnv = "FORGE_CLI_RUN_CHILD"

// TestRunChild is `forge-lsp run ARGS...` when TestCtrlC starts the test
// binary as a child (with the arguments after --); otherwise it does
// nothing.
func TestRunChild(t *testing.T) {
	if os.Getenv(runChildEnv) == "" {
		return
	}
	os.Exit(Run(flag.Args(), os.Stdin, os.Stdout, os.Stderr))
}

// TestCtrlC starts `forge-lsp run` in a child process on a prompt that
// runs for minutes, sends SIGINT and checks that the run stops (rather
// than being abandoned after the grace period) and the process exits with
// 130.
func TestCtrlC(t *testing.T) {
	// Each section entry burns most of its instruction budget, then jumps;
	// the run would take minutes before the section-entry cap.
	p := writePrompt(t, "## A\n\n```lua\nif not var.started then var.started = true log(\"started\") end\nlocal x = 0\nfor i = 1, 3000000 do x = x + i end\njump(\"## B\")\n```\n\n"+
		"## B\n\n```lua\nlocal x = 0\nfor i = 1, 3000000 do x = x + i end\njump(\"## A\")\n```\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunChild$", "--", p)
	cmd.Env = append(os.Environ(), runChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the prompt is running.
	buf := make([]byte, 64)
	n, _ := stderr.Read(buf)
	if !strings.Contains(string(buf[:n]), "started") {
		t.Fatalf("unexpected stderr %q", buf[:n])
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		b.ReadFrom(stderr)
		rest <- b.String()
	}()
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	msg := <-rest
	t.Logf("exit %d; stderr %q", code, msg)
	if code != 130 {
		t.Errorf("exit code %d, want 130 (%v)", code, err)
	}
	if strings.Contains(msg, "did not stop") {
		t.Errorf("the run did not stop when cancelled: %q", msg)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.Contains(msg, "interrupted by Ctrl-C") {
		t.Errorf("stderr %q", msg)
	}
}

// TestRunGatewayError: a gateway refusal is printed with the prose block's
// line, the HTTP status and the gateway's own message, without the key.
func TestRunGatewayError(t *testing.T) {
	srv := gatewaytest.New(t, "run-gateway-key-123")
	t.Setenv(gateway.EnvURL, srv.BaseURL())
	t.Setenv(gateway.EnvKey, srv.Key)
	p := writePrompt(t, "```lua\nmodels.default(\"m\", \"general assistant model\")\n```\n\n## A\n\nSay hi.\n")
	// Answered 429 every time: retried (Retry-After: 0), then reported.
	for range 1 + gateway.DefaultRetries {
		srv.Enqueue(gatewaytest.Reply{Status: 429, RetryAfter: "0", RawBody: `{"error":{"message":"rate limit reached for run-gateway-key-123","type":"rate_limit_error"}}`})
	}
	code, out, errs := runCLI(t, p)
	want := "gateway: 429 Too Many Requests: rate limit reached for [REDACTED]"
	if code != 1 || out != "" || !strings.HasPrefix(errs, p+":") || !strings.Contains(errs, want) || strings.Contains(errs, srv.Key) {
		t.Errorf("code %d out %q err %q\nwant %q", code, out, errs, want)
	}
	t.Logf("%s", errs)
}
