package testrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// requestLines renders a JSON request body one field per line, with
// multi-line strings (prompt text) split into one line each, so a diff of
// two requests points at the changed field or prompt line.
func requestLines(body string) []string {
	if body == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(body), "", "  ") == nil {
			return strings.Split(buf.String(), "\n")
		}
		return strings.Split(body, "\n")
	}
	var out []string
	flatten(&out, "", v)
	return out
}

func flatten(out *[]string, path string, v any) {
	label := path
	if label == "" {
		label = "."
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			*out = append(*out, label+": {}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(out, p, x[k])
		}
	case []any:
		if len(x) == 0 {
			*out = append(*out, label+": []")
			return
		}
		for i, e := range x {
			flatten(out, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case string:
		if !strings.Contains(x, "\n") {
			b, _ := json.Marshal(x)
			*out = append(*out, label+": "+string(b))
			return
		}
		*out = append(*out, label+": |")
		for _, ln := range strings.Split(x, "\n") {
			*out = append(*out, "    "+ln)
		}
	default:
		b, _ := json.Marshal(x)
		*out = append(*out, label+": "+string(b))
	}
}

// requestDiff is a unified diff of the recorded request against the one
// the run sent.
func requestDiff(cassette, recorded, sent string) string {
	a, b := requestLines(recorded), requestLines(sent)
	for i := range a {
		a[i] += "\n"
	}
	for i := range b {
		b[i] += "\n"
	}
	s, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: a, B: b, FromFile: "recorded " + cassette, ToFile: "sent now", Context: 3,
	})
	if err != nil {
		return ""
	}
	return s
}
