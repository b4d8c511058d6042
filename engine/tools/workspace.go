package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// The workspace file's format, its parsing and the catalog it declares
// are pure and live in engine/toolrule; this file runs the commands.

// Workspace command limits.
const (
	MaxWorkspaceOutput = 1 << 20
	maxStderrQuote     = 2000
)

// LoadWorkspaceTools reads the workspace file at path and returns its
// tools, in file order.
func LoadWorkspaceTools(path string) ([]Tool, error) {
	cfg, err := toolcat.Read(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	out := make([]Tool, 0, len(cfg.Tools))
	for _, s := range cfg.Tools {
		t := &CommandTool{spec: s, dir: dir, timeout: toolrule.DefaultWorkspaceTimeout}
		if s.Timeout != "" {
			t.timeout, _ = time.ParseDuration(s.Timeout)
		}
		out = append(out, t)
	}
	return out, nil
}

// CommandTool is a workspace tool backed by a local command.
type CommandTool struct {
	spec    toolrule.WorkspaceSpec
	dir     string
	timeout time.Duration
}

// ID implements Tool.
func (c *CommandTool) ID() toolrule.ID { return toolrule.ID{Server: "workspace", Name: c.spec.Name} }

// WireName implements Tool.
func (c *CommandTool) WireName() string { return c.spec.Name }

// Description implements Tool.
func (c *CommandTool) Description() string { return c.spec.Description }

// Untrusted reports whether the tool's output is wrapped in the run's
// envelope (its forge-tools.json entry says "trust": "untrusted").
func (c *CommandTool) Untrusted() bool { return c.spec.Trust == "untrusted" }

// Parameters implements Tool.
func (c *CommandTool) Parameters() json.RawMessage { return c.spec.Parameters }

// Call runs the command with the arguments on stdin.
func (c *CommandTool) Call(ctx context.Context, arguments string) (Output, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	argv := append([]string(nil), c.spec.Command...)
	if strings.ContainsRune(argv[0], '/') && !filepath.IsAbs(argv[0]) {
		argv[0] = filepath.Join(c.dir, argv[0])
	}
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Dir = c.dir
	cmd.Stdin = strings.NewReader(arguments)
	stdout := &capped{max: MaxWorkspaceOutput}
	stderr := &capped{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A grandchild holding the pipes open must not hang the run.
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	err := cmd.Run()
	reapGroup(cmd)
	name := c.spec.Name
	switch {
	case ctx.Err() != nil:
		return Output{}, &Error{Kind: ErrCancelled, Msg: name + ": cancelled", Err: ctx.Err()}
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return Output{}, &Error{Kind: ErrTransport, Msg: fmt.Sprintf("%s: command timed out after %s", name, c.timeout)}
	case err != nil:
		return Output{}, &Error{Kind: ErrBackend, Msg: fmt.Sprintf("%s: command failed: %v%s", name, err, quoteStderr(stderr.Bytes())), Err: err}
	case stdout.over:
		return Output{}, &Error{Kind: ErrBackend, Msg: fmt.Sprintf("%s: output exceeds %d bytes", name, MaxWorkspaceOutput)}
	case !utf8.Valid(stdout.Bytes()):
		return Output{}, &Error{Kind: ErrBackend, Msg: name + ": output is not UTF-8 text"}
	}
	text := strings.TrimSuffix(strings.TrimSuffix(stdout.String(), "\n"), "\r")
	if c.Untrusted() {
		return Untrusted(text), nil
	}
	return Trusted(text), nil
}

func quoteStderr(b []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "?"))
	if s == "" {
		return ""
	}
	if len(s) > maxStderrQuote {
		s = "…" + s[len(s)-maxStderrQuote:]
	}
	return "; stderr: " + s
}

// capped is a buffer that keeps at most max bytes and remembers overflow.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
