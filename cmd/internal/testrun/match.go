package testrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"
)

// Matcher checks one text (the output, a store file or an error message).
// Every set field must hold. A bare string in the file means equals.
type Matcher struct {
	Pos         Pos
	Equals      *string
	Contains    []string
	NotContains []string
	Regex       *regexp.Regexp
	// Schema validates the text parsed as JSON.
	Schema *jsonschema.Resolved
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
// one). References are resolved inside the schema only: nothing is ever
// loaded from files or the network.
func compileSchema(v *yaml.Node) (res *jsonschema.Resolved, err error) {
	var text []byte
	var doc any
	if v.Kind == yaml.ScalarNode {
		text = []byte(v.Value)
		if err := json.Unmarshal(text, &doc); err != nil {
			return nil, fmt.Errorf("a string schema must be JSON: %v", err)
		}
	} else {
		var raw any
		if err := v.Decode(&raw); err != nil {
			return nil, err
		}
		// Round-trip through JSON so numbers and maps take the types the
		// validator expects.
		if text, err = json.Marshal(raw); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(text, &doc); err != nil {
			return nil, err
		}
	}
	// The validator recurses without a bound: a self-applying reference
	// ends the process with a stack overflow no recover catches.
	if err := guardSchema(doc); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("the schema cannot be used: %v", r)
		}
	}()
	var sch jsonschema.Schema
	if err := json.Unmarshal(text, &sch); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	res, err = sch.Resolve(&jsonschema.ResolveOptions{
		Loader: func(u *url.URL) (*jsonschema.Schema, error) {
			return nil, fmt.Errorf("$ref %s is not loaded: only references inside the schema (#/$defs/...) are resolved", u)
		},
	})
	if err != nil {
		return nil, errors.New(schemaErr(err))
	}
	return res, nil
}

// validate checks a JSON text against the schema, turning a panic inside
// the validator into an error.
func validate(sch *jsonschema.Resolved, inst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the validator failed: %v", r)
		}
	}()
	return sch.Validate(inst)
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
		var inst any
		if err := json.Unmarshal([]byte(text), &inst); err != nil {
			fail("is not JSON (json_schema needs a JSON text): %v; got %s", err, show(text))
		} else if err := validate(m.Schema, inst); err != nil {
			fail("does not match json_schema: %s", strings.ReplaceAll(strings.TrimSpace(schemaErr(err)), "\n", "; "))
		}
	}
	return out
}

// schemaErr rewrites the validator's "validating LOC: validating LOC:
// MSG" chain as "at schema LOC: MSG", naming the innermost schema that
// failed.
func schemaErr(err error) string {
	msg, loc := err.Error(), ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		l, m, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		loc, msg = l, m
	}
	msg = tidyNumbers(strings.TrimPrefix(msg, "jsonschema: "))
	switch loc {
	case "":
		return msg
	case "root":
		return "at the schema's top: " + msg
	}
	return "at schema " + loc + ": " + msg
}

// tidyNumbers writes the validator's numbers as JSON would: the words
// "5/1", "29/4" and "3.000000" become "5", "7.25" and "3".
func tidyNumbers(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if w == "" || !(w[0] == '-' || w[0] >= '0' && w[0] <= '9') {
			continue
		}
		if r, ok := new(big.Rat).SetString(w); ok {
			f, _ := r.Float64()
			words[i] = strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	return strings.Join(words, " ")
}
