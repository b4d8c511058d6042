package testrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// Matcher checks one text (the output, a store file or an error message).
// Every set field must hold. A bare string in the file means equals.
type Matcher struct {
	Pos         Pos
	Equals      *string
	Contains    []string
	NotContains []string
	Regex       *regexp.Regexp
	// Schema validates the text parsed as JSON.
	Schema *jsonschema.Schema
	// Absent (store only) expects that the file does not exist.
	Absent bool
}

// Mismatch is one unmet expectation; Expected and Actual are filled when a
// side-by-side comparison helps (equals).
type Mismatch struct {
	Pos              Pos
	Msg              string
	Expected, Actual string
}

var matcherKeys = []string{"equals", "contains", "not_contains", "regex", "json_schema", "absent"}

func parseMatcher(f *File, v *yaml.Node, what string, store bool) *Matcher {
	m := &Matcher{Pos: pos(v)}
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		s := v.Value
		m.Equals = &s
		return m
	}
	if v.Kind != yaml.MappingNode {
		f.errorf(pos(v), "test-matcher", "`%s` is a matcher: a mapping with any of equals, contains, not_contains, regex, json_schema", what)
		return nil
	}
	known := matcherKeys
	if !store {
		known = matcherKeys[:5]
	}
	before := len(f.Diags)
	strs := func(v *yaml.Node, key string) []string {
		if v.Kind == yaml.SequenceNode {
			var out []string
			for _, it := range v.Content {
				if s, ok := str(f, it, what+"."+key+" item"); ok {
					out = append(out, s)
				}
			}
			return out
		}
		if s, ok := str(f, v, what+"."+key); ok {
			return []string{s}
		}
		return nil
	}
	eachKey(f, v, "matcher `"+what+"`", known, func(k, v *yaml.Node) {
		switch k.Value {
		case "equals":
			if s, ok := str(f, v, what+".equals"); ok {
				m.Equals = &s
			}
		case "contains":
			m.Contains = strs(v, "contains")
		case "not_contains":
			m.NotContains = strs(v, "not_contains")
		case "regex":
			if s, ok := str(f, v, what+".regex"); ok {
				re, err := regexp.Compile(s)
				if err != nil {
					f.errorf(pos(v), "test-matcher", "`regex` does not compile: %v (Go RE2 syntax)", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
					return
				}
				m.Regex = re
			}
		case "json_schema":
			sch, err := compileSchema(v)
			if err != nil {
				f.errorf(pos(v), "test-matcher", "`json_schema` is not a valid JSON Schema: %v", err)
				return
			}
			m.Schema = sch
		case "absent":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				f.errorf(pos(v), "test-matcher", "`absent` is true or false")
				return
			}
			m.Absent = v.Value == "true"
		}
	})
	if len(f.Diags) > before {
		return nil
	}
	if m.Absent && (m.Equals != nil || m.Contains != nil || m.NotContains != nil || m.Regex != nil || m.Schema != nil) {
		f.errorf(m.Pos, "test-matcher", "`absent: true` cannot be combined with other matchers: an absent file has no text")
		return nil
	}
	if !m.Absent && m.Equals == nil && m.Contains == nil && m.NotContains == nil && m.Regex == nil && m.Schema == nil && len(v.Content) == 0 {
		f.errorf(m.Pos, "test-matcher", "empty matcher `%s`: add equals, contains, not_contains, regex or json_schema", what)
		return nil
	}
	return m
}

// compileSchema compiles an inline YAML schema (or a JSON string holding
// one).
func compileSchema(v *yaml.Node) (*jsonschema.Schema, error) {
	var doc any
	if v.Kind == yaml.ScalarNode {
		var err error
		if doc, err = jsonschema.UnmarshalJSON(strings.NewReader(v.Value)); err != nil {
			return nil, fmt.Errorf("a string schema must be JSON: %v", err)
		}
	} else {
		var raw any
		if err := v.Decode(&raw); err != nil {
			return nil, err
		}
		// Round-trip through JSON so numbers and maps take the types the
		// validator expects.
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		if doc, err = jsonschema.UnmarshalJSON(strings.NewReader(string(b))); err != nil {
			return nil, err
		}
	}
	c := jsonschema.NewCompiler()
	// No loader: an inline schema never reads files or the network.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const url = "urn:forge-lsp:json_schema"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		var se *jsonschema.SchemaValidationError
		if errors.As(err, &se) {
			return nil, errors.New(schemaErr(se.Err))
		}
		return nil, errors.New(strings.ReplaceAll(err.Error(), url, "the schema"))
	}
	return sch, nil
}

const showMax = 400

func show(s string) string {
	if len(s) > showMax {
		return fmt.Sprintf("%q… (%d bytes)", s[:showMax], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// Check tests text; present is false when the thing does not exist (a
// missing store file). It returns every unmet expectation, prefixed with
// what.
func (m *Matcher) Check(what, text string, present bool) []Mismatch {
	var out []Mismatch
	fail := func(format string, a ...any) {
		out = append(out, Mismatch{Pos: m.Pos, Msg: what + ": " + fmt.Sprintf(format, a...)})
	}
	if m.Absent {
		if present {
			fail("exists (%d bytes) but the case expects it absent", len(text))
		}
		return out
	}
	if !present {
		fail("does not exist")
		return out
	}
	if m.Equals != nil && text != *m.Equals {
		out = append(out, Mismatch{Pos: m.Pos, Msg: fmt.Sprintf("%s: want %s, got %s", what, show(*m.Equals), show(text)), Expected: *m.Equals, Actual: text})
	}
	for _, s := range m.Contains {
		if !strings.Contains(text, s) {
			fail("does not contain %q; got %s", s, show(text))
		}
	}
	for _, s := range m.NotContains {
		if strings.Contains(text, s) {
			fail("contains %q, which it must not; got %s", s, show(text))
		}
	}
	if m.Regex != nil && !m.Regex.MatchString(text) {
		fail("does not match regex %q; got %s", m.Regex.String(), show(text))
	}
	if m.Schema != nil {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			fail("is not JSON (json_schema needs a JSON text): %v; got %s", err, show(text))
		} else if err := m.Schema.Validate(inst); err != nil {
			fail("does not match json_schema: %s", strings.ReplaceAll(strings.TrimSpace(schemaErr(err)), "\n", "; "))
		}
	}
	return out
}

func schemaErr(err error) string {
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		var parts []string
		var walk func(e *jsonschema.ValidationError)
		walk = func(e *jsonschema.ValidationError) {
			if len(e.Causes) == 0 {
				loc := "/" + strings.Join(e.InstanceLocation, "/")
				if len(e.InstanceLocation) == 0 {
					loc = "the top"
				}
				parts = append(parts, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			}
			for _, c := range e.Causes {
				walk(c)
			}
		}
		walk(ve)
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	return err.Error()
}
