package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// ConfigFileName is the workspace configuration file. The driver's users
// find it by walking up from the checked file (FindConfig).
const ConfigFileName = ".forge-lsp.json"

// Config adjusts the driver for a workspace. The zero value and nil mean
// "defaults".
type Config struct {
	// Severity overrides a code's default severity; Off disables it.
	Severity map[string]Severity
	// Path is the file the configuration was read from ("" if none).
	Path string
	// ToolsFile is the workspace tools file a run of the prompt would use
	// (the run's tools-file option). "" means the forge-tools.json found
	// at or above the prompt's folder, as a run looks it up.
	ToolsFile string
	// Catalog is the tool catalog the host resolved for the prompt (the
	// language server's snapshot holds one); nil means the driver loads
	// it (toolcat.ForPrompt with ToolsFile). It is not read from the
	// configuration file.
	Catalog *toolrule.Catalog
	// Once says this is the prompt's only analysis (a one-shot check, not
	// an editor's document): the passes then store no per-chunk findings
	// memos, which serve only a later analysis of an edited version
	// (docs/architecture.md, "Memos"). Not read from the configuration
	// file.
	Once bool
}

// WorkspaceToolsFile returns c.ToolsFile; nil gives "".
func (c *Config) WorkspaceToolsFile() string {
	if c == nil {
		return ""
	}
	return c.ToolsFile
}

// configJSON is the on-disk form:
//
//	{"severity": {"unused-local": "hint", "undefined-global": "off"}}
type configJSON struct {
	Severity map[string]string `json:"severity"`
}

func (c *Config) severity(code string) (Severity, bool) {
	if c == nil {
		return 0, false
	}
	s, ok := c.Severity[code]
	return s, ok && s != SeverityDefault
}

// ParseConfig decodes a configuration file's content. Unknown top-level
// keys and bad severity names are errors so that a typo does not silently
// do nothing.
func ParseConfig(path string, data []byte) (*Config, error) {
	var raw configJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %v (expected {\"severity\": {\"CODE\": \"error|warning|info|hint|off\"}})", path, err)
	}
	cfg := &Config{Severity: map[string]Severity{}, Path: path}
	codes := make([]string, 0, len(raw.Severity))
	for code := range raw.Severity {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		s, err := ParseSeverity(raw.Severity[code])
		if err != nil {
			return nil, fmt.Errorf("%s: code %q: %v", path, code, err)
		}
		cfg.Severity[code] = s
	}
	return cfg, nil
}

// UnknownCodes returns the configured codes not in known, sorted, so that
// front ends can warn about typos.
func (c *Config) UnknownCodes(known func(string) bool) []string {
	if c == nil {
		return nil
	}
	var out []string
	for code := range c.Severity {
		if !known(code) {
			out = append(out, code)
		}
	}
	sort.Strings(out)
	return out
}

// FindConfig looks for ConfigFileName in the directory of file (or file
// itself when it is a directory) and each parent, and loads the first one
// found. It returns nil, nil when there is none.
func FindConfig(file string) (*Config, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	dir := abs
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		dir = filepath.Dir(abs)
	}
	for {
		p := filepath.Join(dir, ConfigFileName)
		data, err := fsread.ReadFile(p, fsread.Config)
		if err == nil {
			return ParseConfig(p, data)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}
