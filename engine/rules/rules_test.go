package rules

import (
	"strings"
	"testing"
)

func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // "" means no error
	}{
		{"log ok", LogMessage("step 1 done"), ""},
		{"log newline", LogMessage("a\nb"), "control characters or line separators (U+000A)"},
		{"log long", LogMessage(strings.Repeat("x", LogMessageRunes+1)), "longer than 256"},
		{"log utf8", LogMessage("\xff"), "valid UTF-8"},
		{"fanout string", FanoutCollection(Value{Type: "string"}), "second parameter is a collection"},
		{"fanout table", FanoutCollection(Value{Type: "table", Len: 0}), ""},
		{"fanout empty", FanoutMembers(0), "empty collection"},
		{"var function", VarValue("var.f", Value{Type: "function"}), "var.f must be JSON data, got function"},
		{"var table", VarValue("var.t", Value{Type: "table"}), ""},
		{"opt thinking", ModelOpt("models.bind", "thinking", Value{Type: "string"}), "opts.thinking must be a boolean, got a string"},
		{"opt context", ModelOpt("models.bind", "context", Value{Type: "number", Num: 0}), "greater than zero"},
		{"opt tokens", ModelOpt("models.bind", "max_tokens", Value{Type: "number", Num: 1.5}), "must be an integer"},
		{"opt temperature", ModelOpt("models.bind", "temperature", Value{Type: "number", Num: 2.5}), "from 0 to 2"},
		{"opt ok", ModelOpt("models.bind", "temperature", Value{Type: "number", Num: 0.2}), ""},
		{"opt unknown", ModelOpt("models.bind", "temprature", Value{Type: "number"}), `unknown models.bind opts key "temprature"`},
		{"path backslash", StorePath(`a\b`), "backslash"},
		{"path dotdot", StorePath("a/../b"), ". or .. segment"},
		{"path ok", StorePath("notes/today.md"), ""},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error containing %q", tc.name, tc.err, tc.want)
		}
	}
	if _, err := CompileGlob("a/**x"); err == nil {
		t.Error("CompileGlob accepted ** inside a segment")
	}
	if g, err := CompileGlob("notes/**/*.md"); err != nil || !g.Match("notes/a/b.md") || g.Match("other/b.md") {
		t.Errorf("CompileGlob(notes/**/*.md): %v", err)
	}
}

func TestModelArgRules(t *testing.T) {
	str := Value{Type: "string", Len: -1}
	num := Value{Type: "number", Len: -1}
	for _, c := range []struct {
		err  error
		want string
	}{
		{ModelArgCount("models.bind", 3), ""},
		{ModelArgCount("models.bind", 4), "models.bind expects at most three arguments"},
		{ModelArg("models.bind", str), ""},
		{ModelArg("models.default", num), "models.default expects alias, description, and optional opts table"},
		{ModelOptsTable("models.bind", Value{Type: "nil"}), ""},
		{ModelOptsTable("models.bind", Value{Type: "table"}), ""},
		{ModelOptsTable("models.bind", str), "models.bind opts must be a table when provided"},
		{ModelOptKey("models.bind", str), ""},
		{ModelOptKey("models.bind", num), "models.bind opts keys must be strings"},
	} {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
