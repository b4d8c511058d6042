package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// WorkspaceFile is the name of the workspace tools file. The engine looks
// for it in the prompt's directory and then in each parent directory.
//
// Format (JSON, unknown keys rejected):
//
//	{
//	  "tools": [
//	    {
//	      "name": "word_count",                  // wire name, [A-Za-z0-9_.-]+
//	      "description": "Count the words in a text.",
//	      "parameters": {"type": "object",        // JSON Schema object
//	                     "properties": {"text": {"type": "string"}},
//	                     "required": ["text"]},
//	      "trust": "trusted",                     // required: "trusted" or "untrusted"
//	      "timeout": "10s",                       // optional Go duration, default 30s, at most 10m
//	      "command": ["python3", "tools/wc.py"]   // argv; no shell
//	    }
//	  ]
//	}
//
// A call runs command in the directory holding the file (a command[0]
// containing a slash is resolved against that directory too), writes the
// model's JSON arguments to stdin and takes stdout (UTF-8, at most 1 MiB,
// one trailing newline removed) as the result. A non-zero exit, a timeout
// or output over the cap is a failed tool call; the error quotes the end
// of stderr. The tool's id is ("workspace", name). Trust has no default
// because the seed makes trust marking mandatory: "untrusted" output is
// wrapped in the run's envelope, "trusted" output reaches the model as is.
const WorkspaceFile = "forge-tools.json"

// Workspace command limits.
const (
	DefaultWorkspaceTimeout = 30 * time.Second
	MaxWorkspaceTimeout     = 10 * time.Minute
	MaxWorkspaceOutput      = 1 << 20
	maxStderrQuote          = 2000
)

// WorkspaceSpec is one tool declared in the workspace file.
type WorkspaceSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Trust       string          `json:"trust"`
	Timeout     string          `json:"timeout,omitempty"`
	Command     []string        `json:"command"`
}

// WorkspaceConfig is the decoded workspace file.
type WorkspaceConfig struct {
	Tools []WorkspaceSpec `json:"tools"`
}

// FindWorkspaceFile returns the nearest forge-tools.json at or above dir.
func FindWorkspaceFile(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, WorkspaceFile)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// ParseWorkspaceConfig decodes and checks a workspace file's content. name
// is used in messages. It runs nothing, so the analyzer and the language
// server can validate the file safely.
func ParseWorkspaceConfig(name string, data []byte) (*WorkspaceConfig, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cfg WorkspaceConfig
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	seen := map[string]bool{}
	for i, s := range cfg.Tools {
		where := fmt.Sprintf("%s: tools[%d]", name, i)
		if s.Name != "" {
			where += fmt.Sprintf(" (%s)", s.Name)
		}
		if !toolrule.ValidWireName(s.Name) {
			return nil, fmt.Errorf("%s: name %q must match [A-Za-z0-9_.-]+", where, s.Name)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("%s: name %q is declared twice", where, s.Name)
		}
		seen[s.Name] = true
		if strings.TrimSpace(s.Description) == "" {
			return nil, fmt.Errorf("%s: description is required (the picker and the model read it)", where)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(s.Parameters, &obj) != nil || obj == nil {
			return nil, fmt.Errorf("%s: parameters must be a JSON Schema object, e.g. {\"type\":\"object\",\"properties\":{}}", where)
		}
		if s.Trust != "trusted" && s.Trust != "untrusted" {
			return nil, fmt.Errorf("%s: trust must be \"trusted\" or \"untrusted\" (no default: decide whether the model may read its output as instructions)", where)
		}
		if s.Timeout != "" {
			d, err := time.ParseDuration(s.Timeout)
			if err != nil || d <= 0 || d > MaxWorkspaceTimeout {
				return nil, fmt.Errorf("%s: timeout %q must be a duration such as \"10s\", above 0 and at most %s", where, s.Timeout, MaxWorkspaceTimeout)
			}
		}
		if len(s.Command) == 0 || s.Command[0] == "" {
			return nil, fmt.Errorf("%s: command must be a non-empty argv array, e.g. [\"python3\", \"tools/x.py\"]", where)
		}
	}
	return &cfg, nil
}

// LoadWorkspaceTools reads the workspace file at path and returns its
// tools, in file order.
func LoadWorkspaceTools(path string) ([]Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseWorkspaceConfig(path, data)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	out := make([]Tool, 0, len(cfg.Tools))
	for _, s := range cfg.Tools {
		t := &CommandTool{spec: s, dir: dir, timeout: DefaultWorkspaceTimeout}
		if s.Timeout != "" {
			t.timeout, _ = time.ParseDuration(s.Timeout)
		}
		out = append(out, t)
	}
	return out, nil
}

// CommandTool is a workspace tool backed by a local command.
type CommandTool struct {
	spec    WorkspaceSpec
	dir     string
	timeout time.Duration
}

// ID implements Tool.
func (c *CommandTool) ID() ID { return ID{Server: "workspace", Name: c.spec.Name} }

// WireName implements Tool.
func (c *CommandTool) WireName() string { return c.spec.Name }

// Description implements Tool.
func (c *CommandTool) Description() string { return c.spec.Description }

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
	err := cmd.Run()
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
	if c.spec.Trust == "untrusted" {
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
