package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// evaluator runs expressions in one sandbox and one plain gopher-lua
// state, reused across expressions (each runs as its own chunk and leaves
// nothing behind), so a table of thousands of cases does not open
// thousands of states.
type evaluator struct {
	s     *State
	plain *lua.LState
}

func newEvaluator(t *testing.T) *evaluator {
	return &evaluator{s: New(context.Background(), Options{}), plain: lua.NewState()}
}

func (e *evaluator) close() {
	e.s.Close()
	e.plain.Close()
}

func (e *evaluator) both(t *testing.T, expr string) (got, want string) {
	t.Helper()
	src := "local r = {pcall(function() return " + expr + " end)}\n" +
		"if not r[1] then return 'error' end\n" +
		"local out = {} for i = 2, #r do out[#out+1] = type(r[i]) .. ':' .. tostring(r[i]) end\n" +
		"return table.concat(out, ',')"
	if err := run(t, e.s, src); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	got = e.s.L.Get(-1).String()
	e.s.L.SetTop(0)
	if err := e.plain.DoString(src); err != nil {
		t.Fatalf("%s (plain): %v", expr, err)
	}
	want = e.plain.Get(-1).String()
	e.plain.SetTop(0)
	return got, want
}

// TestPatternsAgreeWithGopherLua checks the budgeted matcher against
// gopher-lua's on the pattern features prompts use. Where gopher-lua
// departs from the reference implementation the sandbox follows the
// reference, and those cases are checked on their own below: gopher-lua
// has no %f, anchors gmatch at '^' and ignores the start of an empty find.
func TestPatternsAgreeWithGopherLua(t *testing.T) {
	subjects := []string{"", "hello world", "  key = value  ", "a,b,,c", "(foo(bar)baz)", "THE (quick) fox", "x=1, y=22, z=333", "aaa", "f(a[1])", "line1\nline2\n"}
	patterns := []string{"", "o", "l+", "l*", "l-", "l?o", "^h", "d$", "^%s*(.-)%s*$", "(%w+)=(%w+)", "%a+", "%d+", "[%a_][%w_]*",
		"[^,]*", "()o()", "%b()", "%f[%a]%a+", "(a)%1", "[a-c]+", ".-", "(%w+)%s*=%s*(%w+)", "[%]]", "[]]", "%.", "%S+", "(h)(e)(l)",
		"[^%s]+", "x*$", "^", "$", "%u+", "%p", "[%d,]+", "(.)(.)", "\n"}
	ev := newEvaluator(t)
	defer ev.close()
	for _, subj := range subjects {
		for _, pat := range patterns {
			q := fmt.Sprintf("%q, %q", subj, pat)
			for _, expr := range []string{
				"string.find(" + q + ")",
				"string.find(" + q + ", 3)",
				"string.match(" + q + ")",
				"string.gsub(" + q + ", '<%0>')",
				"string.gsub(" + q + ", '#', 2)",
				"string.gsub(" + q + ", function(a) return a:upper() end)",
				"(function() local t = {} for a, b in string.gmatch(" + q + ") do t[#t+1] = tostring(a) .. '|' .. tostring(b) end return table.concat(t, ';') end)()",
			} {
				if strings.Contains(pat, "%f") || strings.Contains(expr, "gmatch") && strings.HasPrefix(pat, "^") || pat == "" && strings.Contains(expr, ", 3)") {
					continue
				}
				got, want := ev.both(t, expr)
				if got != want {
					t.Errorf("%s\n got %s\nwant %s", expr, got, want)
				}
			}
		}
	}
}

// TestReferenceBehaviour covers the cases where gopher-lua departs from
// the reference implementation.
func TestReferenceBehaviour(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	expectResults(t, s, map[string]string{
		`return table.concat({string.find("THE (quick) fox", "%f[%a]%a+", 5)}, ",")`: "6,10",
		`return (string.gsub("hello world", "%f[%w]%w+", "<%0>"))`:                   "<hello> <world>",
		`local n = 0 for w in ("^a^a"):gmatch("^a") do n = n + 1 end return n`:       "2",
		`return table.concat({string.find("hello", "", 3)}, ",")`:                    "3,2",
		`return tostring(string.find("abc", "b", 10))`:                               "nil",
		`return table.concat({string.find("abc", "c", -1)}, ",")`:                    "3,3",
	})
}

// TestPatternErrors checks that malformed patterns raise (never panic
// the host) with the reference implementation's messages.
func TestPatternErrors(t *testing.T) {
	for pat, msg := range map[string]string{
		"%":                       "malformed pattern (ends with '%')",
		"[a":                      "malformed pattern (missing ']')",
		"[":                       "malformed pattern (missing ']')",
		"(a":                      "unfinished capture",
		"a)":                      "invalid pattern capture",
		"%1":                      "invalid capture index",
		"%b":                      "missing arguments to '%b'",
		"%fa":                     "missing '[' after '%f' in pattern",
		"[%":                      "malformed pattern (missing ']')",
		strings.Repeat("a?", 300): "pattern too complex",
		strings.Repeat("(", 33) + strings.Repeat(")", 33): "too many captures",
	} {
		s := New(context.Background(), Options{})
		err := run(t, s, fmt.Sprintf("return string.match(%q, %q)", strings.Repeat("a", 400), pat))
		s.Close()
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("pattern %.20q: got %v, want %q", pat, err, msg)
		}
	}
}

func TestFormatAndLibraries(t *testing.T) {
	s := New(context.Background(), Options{})
	defer s.Close()
	expectResults(t, s, map[string]string{
		`return string.format("%5.2f|%-3s|%d|%x|%5s|%.2s|%c|%%|%i", 1.5, "a", 3, 255, "ab", "xyz", 65, 7)`: " 1.50|a  |3|ff|   ab|xy|A|%|7",
		`return string.format("%q", 'a"b\\c\n\0')`:                                                         "\"a\\\"b\\\\c\\\n\\000\"",
		`return string.format("%s %s", 1, true)`:                                                           "1 true",
		`return select('#', unpack({1, 2, 3}))`:                                                            "3",
		`return table.concat({string.byte("abc", 1, -1)}, ",")`:                                            "97,98,99",
		`local t = {3, 1, 2} table.sort(t) table.insert(t, 1, 0) table.remove(t) return table.concat(t)`:   "012",
		`return ("x"):rep(3) .. ("AbC"):lower() .. ("AbC"):upper() .. ("abc"):reverse()`:                   "xxxabcABCcba",
	})
	for src, msg := range map[string]string{
		`return string.format("%d")`:                       "bad argument #2",
		`return string.format("%y", 1)`:                    "invalid option '%y'",
		`return string.format("%123d", 1)`:                 "width or precision too long",
		`return unpack({}, 1, 1e8)`:                        "too many results to unpack",
		`return string.byte(("x"):rep(1e5), 1, -1)`:        "string slice too long",
		`return ("x"):gsub("x", true)`:                     "string/function/table expected",
		`return ("x"):gsub("x", function() return {} end)`: "invalid replacement value (a table)",
	} {
		err := run(t, s, src)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v, want %q", src, err, msg)
		}
		s.L.SetTop(0)
	}
}

// expectResults runs each chunk in s and checks the string of its first
// result.
func expectResults(t *testing.T, s *State, cases map[string]string) {
	t.Helper()
	for src, want := range cases {
		if err := run(t, s, src); err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got := s.L.Get(-1).String(); got != want {
			t.Errorf("%s = %q, want %q", src, got, want)
		}
		s.L.SetTop(0)
	}
}
