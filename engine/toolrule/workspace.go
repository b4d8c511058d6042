package toolrule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
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

// Workspace command time limits.
const (
	DefaultWorkspaceTimeout = 30 * time.Second
	MaxWorkspaceTimeout     = 10 * time.Minute
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
		if !ValidWireName(s.Name) {
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
