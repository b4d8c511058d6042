package format

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Options configure the formatter.
type Options struct {
	Lua LuaOptions
}

// LuaOptions are the StyLua options the formatter follows
// (docs/formatting.md#options), read from a stylua.toml or .stylua.toml.
type LuaOptions struct {
	// IndentType is "Tabs" or "Spaces".
	IndentType string
	// IndentWidth is the number of spaces of an indentation level (and
	// the width a tab counts for against ColumnWidth).
	IndentWidth int
	// ColumnWidth is the line width past which tables, argument lists and
	// operator chains are split.
	ColumnWidth int
	// QuoteStyle is AutoPreferDouble, AutoPreferSingle, ForceDouble or
	// ForceSingle.
	QuoteStyle string
	// CallParentheses is Always, NoSingleString, NoSingleTable, None or
	// Input.
	CallParentheses string
}

// Default returns StyLua's default options.
func Default() Options {
	return Options{Lua: LuaOptions{IndentType: "Tabs", IndentWidth: 4, ColumnWidth: 120, QuoteStyle: "AutoPreferDouble", CallParentheses: "Always"}}
}

// ConfigNames are the StyLua configuration files, in the order StyLua
// looks for them in a folder.
var ConfigNames = [...]string{"stylua.toml", ".stylua.toml"}

func choices(key string) []string {
	switch key {
	case "indent_type":
		return []string{"Tabs", "Spaces"}
	case "quote_style":
		return []string{"AutoPreferDouble", "AutoPreferSingle", "ForceDouble", "ForceSingle"}
	}
	return []string{"Always", "NoSingleString", "NoSingleTable", "None", "Input"}
}

// ParseConfig reads a stylua.toml's text over Default. Options the
// formatter does not implement are accepted and ignored when they are
// StyLua's (they are listed in docs/formatting.md); an unknown key or a
// bad value is an error naming the file, the line and the accepted
// values.
func ParseConfig(name string, data []byte) (Options, error) {
	o := Default()
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		if de, ok := err.(*toml.DecodeError); ok {
			line, col := de.Position()
			return o, fmt.Errorf("%s:%d:%d: %s", name, line, col, de.Error())
		}
		return o, fmt.Errorf("%s: %v", name, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		bad := func(want string) error {
			return fmt.Errorf("%s: %s = %v: want %s (docs/formatting.md#options)", name, k, v, want)
		}
		switch k {
		case "indent_type", "quote_style", "call_parentheses":
			s, ok := v.(string)
			if !ok || !contains(choices(k), s) {
				return o, bad("one of " + strings.Join(choices(k), ", "))
			}
			switch k {
			case "indent_type":
				o.Lua.IndentType = s
			case "quote_style":
				o.Lua.QuoteStyle = s
			default:
				o.Lua.CallParentheses = s
			}
		case "indent_width", "column_width":
			n, ok := v.(int64)
			if !ok || n < 1 || n > 1000 {
				return o, bad("a whole number from 1 to 1000")
			}
			if k == "indent_width" {
				o.Lua.IndentWidth = int(n)
			} else {
				o.Lua.ColumnWidth = int(n)
			}
		case "line_endings", "collapse_simple_statement", "space_after_function_names",
			"syntax", "sort_requires", "block_newline_gaps":
			// StyLua options the formatter does not implement
			// (docs/formatting.md#options).
		default:
			return o, fmt.Errorf("%s: unknown StyLua option %q (docs/formatting.md#options lists the options)", name, k)
		}
	}
	return o, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Lookup finds the StyLua configuration that applies to files in dir: the
// first stylua.toml or .stylua.toml in dir or a folder above it. read
// reads a file (the caller's reader for repository files); a file that
// does not exist is skipped. It returns Default and "" when there is
// none.
func Lookup(dir string, read func(path string) ([]byte, error)) (Options, string, error) {
	for {
		for _, n := range ConfigNames {
			p := filepath.Join(dir, n)
			data, err := read(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return Default(), p, err
			}
			o, err := ParseConfig(p, data)
			return o, p, err
		}
		up := filepath.Dir(dir)
		if up == dir {
			return Default(), "", nil
		}
		dir = up
	}
}
