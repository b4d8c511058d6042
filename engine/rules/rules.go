// Package rules holds the argument rules the engine enforces when a host
// function runs, as pure functions over a small value description. The
// runtime (engine/run) calls them on the values a Lua call passes; the
// analyzer (analysis/passes/callargs, modelopts) calls them on literal arguments, so
// a rule and its message are written once. Store path and glob rules live
// in engine/store (ValidatePath, CompileGlob), which is pure as well.
package rules

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// LogMessageRunes caps one log message.
const LogMessageRunes = 256

// MaxDepth caps execute/fanout nesting.
const MaxDepth = 8

// DefaultMaxToolIterations is the tool loop's round cap when a prompt's
// frontmatter sets no max_tool_iterations, and MaxToolIterations the
// largest value it may set (docs/language.md#limits): the parser checks
// the key against them, the runtime's loop applies them.
const (
	DefaultMaxToolIterations = 24
	MaxToolIterations        = 1000
)

// MaxSectionEntries is the default cap on section entries per run (jumps,
// chains and arms included).
const MaxSectionEntries = 1000

// Value describes an argument: its Lua type name ("nil", "boolean",
// "number", "string", "table", "function", "userdata", "thread") and,
// when known, its number, its string, or a table's member count.
type Value struct {
	Type string
	Num  float64
	Str  string
	// Len is a table's member count (array part plus other pairs); -1
	// when unknown.
	Len int
	// Handle is, for a userdata, the host object it is ("Tool",
	// "Model"), "other" for any other userdata, "" when unknown.
	Handle string
}

// Messages shared by the runtime and the analyzer.
const (
	FanoutNotCollection = "fanout's second parameter is a collection; for a list section use list_from_section(heading)"
	FanoutEmpty         = "fanout over an empty collection: no work is likely a bug"
)

// LogMessage checks log(message)'s message (the runtime checks the type
// first: "log message must be a string").
func LogMessage(msg string) error {
	if !utf8.ValidString(msg) {
		return fmt.Errorf("log message must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(msg); n > LogMessageRunes {
		return fmt.Errorf("log message is %d characters, longer than %d", n, LogMessageRunes)
	}
	for _, c := range msg {
		if c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || c == 0x2028 || c == 0x2029 {
			return fmt.Errorf("log message must not contain control characters or line separators (U+%04X)", c)
		}
	}
	return nil
}

// FanoutCollection checks fanout's second argument before its members
// are converted: it must be a table (a var table counts).
func FanoutCollection(v Value) error {
	if v.Type != "table" {
		return fmt.Errorf("%s", FanoutNotCollection)
	}
	return nil
}

// FanoutMembers checks the member count, after the worker resolved.
func FanoutMembers(n int) error {
	if n == 0 {
		return fmt.Errorf("%s", FanoutEmpty)
	}
	return nil
}

// VarValue checks a value assigned to var.<path>: it must be JSON data.
func VarValue(path string, v Value) error {
	switch v.Type {
	case "function", "thread", "userdata":
		return fmt.Errorf("%s must be JSON data, got %s", path, v.Type)
	}
	return nil
}

// ModelArgCount checks the number of arguments of models.bind/need/default
// (label names the call).
func ModelArgCount(label string, n int) error {
	if n > 3 {
		return fmt.Errorf("%s expects at most three arguments", label)
	}
	return nil
}

// ModelArg checks the alias or the description of models.bind/need/default:
// both must be strings.
func ModelArg(label string, v Value) error {
	if v.Type != "string" {
		return fmt.Errorf("%s expects alias, description, and optional opts table", label)
	}
	return nil
}

// ModelOptsTable checks the opts argument of models.bind/need/default: nil
// (absent) or a table.
func ModelOptsTable(label string, v Value) error {
	if v.Type != "nil" && v.Type != "table" {
		return fmt.Errorf("%s opts must be a table when provided", label)
	}
	return nil
}

// ModelOptKey checks the type of one opts key: keys are strings.
func ModelOptKey(label string, key Value) error {
	if key.Type != "string" {
		return fmt.Errorf("%s opts keys must be strings", label)
	}
	return nil
}

// ModelOptKeys are the keys of models.bind/need/default options.
var ModelOptKeys = []string{"context", "max_tokens", "temperature", "thinking"}

// ModelOpt checks one models.bind/need/default option; label names the
// call ("models.bind").
func ModelOpt(label, key string, v Value) error {
	switch key {
	case "thinking":
		if v.Type != "boolean" {
			return fmt.Errorf("%s opts.thinking must be a boolean, got a %s", label, v.Type)
		}
	case "context", "max_tokens":
		if v.Type != "number" {
			return fmt.Errorf("%s opts.%s must be an integer, got a %s", label, key, v.Type)
		}
		if v.Num != math.Trunc(v.Num) {
			return fmt.Errorf("%s opts.%s must be an integer", label, key)
		}
		if v.Num <= 0 {
			return fmt.Errorf("%s opts.%s must be greater than zero", label, key)
		}
	case "temperature":
		f := v.Num
		if v.Type != "number" {
			return fmt.Errorf("%s opts.temperature must be a finite number from 0 to 2, got a %s", label, v.Type)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 2 {
			return fmt.Errorf("%s opts.temperature must be a finite number from 0 to 2", label)
		}
	default:
		return fmt.Errorf("unknown %s opts key %q", label, key)
	}
	return nil
}

// JumpInHandler is what jump raises while a tools.add_local handler runs
// (docs/language.md#local-tools); `check` (jump-in-handler) quotes it.
const JumpInHandler = "jump cannot be called in a tool handler: the handler's result goes back to the model; return it, and jump from a Lua block after the prose block"

// ReturnValue checks a value a chunk returns: nil goes on to the next
// block, a scalar is the result; anything else fails. The message is the
// one `check` (bad-result) and the run both give.
func ReturnValue(v Value) error {
	switch v.Type {
	case "nil", "string", "boolean", "number":
		return nil
	}
	return &ResultError{Type: v.Type}
}

// ResultError is ReturnValue's error: what was returned, and the way out.
type ResultError struct {
	// Type is the Lua type returned ("table").
	Type string
}

// What is the message without the way out: "cannot return a table as a
// result".
func (e *ResultError) What() string { return fmt.Sprintf("cannot return a %s as a result", e.Type) }

func (e *ResultError) Error() string {
	return e.What() + ": a chunk's result must be a string, number or boolean (nil goes on to the next block); return a string, or keep the table in var"
}

// ReplyValue checks the value of the `reply` global read back after a
// section chunk.
func ReplyValue(v Value) error {
	switch v.Type {
	case "nil", "string":
		return nil
	}
	return fmt.Errorf("`reply` must be a string or nil, got %s", v.Type)
}

// ArgType declares the Lua types a host function's parameter accepts
// when the call runs (docs/language.md#lua-api): the runtime refuses any
// other, with this declaration's message, before the function does
// anything else with the argument. Strict string parameters refuse
// numbers too; the store's and models' parameters convert a number, as
// Lua's string functions do.
type ArgType struct {
	// Types are the accepted type names: Lua's ("string", "nil"), or a
	// host object ("Tool", "Model"), which is a userdata of that kind.
	Types []string
	// Msg formats the failure: %[1]d is the argument's number, %[2]s
	// the function's name, %[3]s the received type name.
	Msg string
	// Expected, when set, makes the failure Lua's own argument error,
	// "bad argument #1 to f (Expected expected, got table)", which the
	// runtime raises as Lua does, naming the function as the call site
	// does (Msg is then that error's text).
	Expected string
	// Numeric makes an accepted string one that reads as a number (Lua's
	// conversion of a string argument where a number is expected).
	Numeric bool
}

// luaArg is a parameter whose failure is Lua's own argument error.
func luaArg(expected string, types ...string) ArgType {
	return ArgType{Types: types, Expected: expected, Msg: "bad argument #%d to %s (" + expected + " expected, got %s)"}
}

var (
	luaString   = luaArg("string", "string", "number")
	storeLine   = ArgType{Types: []string{"number", "string", "nil"}, Expected: "number", Numeric: true, Msg: "bad argument #%d to %s (number expected, got %s)"}
	target      = ArgType{Types: []string{"string"}, Msg: "section target must be a string, got %[3]s"}
	toolsBind   = ArgType{Types: []string{"string"}, Msg: "%[2]s expects alias, capability description, and an optional description override"}
	override    = ArgType{Types: []string{"string", "nil"}, Msg: "%[2]s override must be a string, got %[3]s"}
	toolsBindAt = []*ArgType{&toolsBind, &toolsBind, &override}
)

// ArgTypes declares, by host function name (synonyms included, and the
// Model:infer method), what each parameter accepts. Every host function
// that takes parameters is here with one member per parameter of its
// engine/api signature; a nil member is a parameter whose value its own
// rule in this package checks (a fanout collection: FanoutCollection;
// the models' alias, description and opts: ModelArg, ModelOptsTable), so
// the runtime validates no argument type by hand.
var ArgTypes = map[string][]*ArgType{
	"log":                 {{Types: []string{"string"}, Msg: "log message must be a string, got %[3]s"}},
	"untrusted":           {{Types: []string{"string"}, Msg: "untrusted expects a string, got %[3]s"}},
	"jump":                {&target},
	"execute":             {&target, {Types: []string{"string", "nil"}, Msg: "execute input must be a string or nil, got %[3]s"}},
	"fanout":              {&luaString, nil},
	"list_from_section":   {&target},
	"store.write":         {&luaString, &luaString},
	"store.append":        {&luaString, &luaString},
	"store.read":          {&luaString, &storeLine, &storeLine},
	"store.read_numbered": {&luaString, &storeLine, &storeLine},
	"store.str_replace":   {&luaString, &luaString, &luaString},
	"store.delete":        {&luaString},
	"store.glob":          {&luaString},
	"store.exists":        {&luaString},
	"tools.bind":          toolsBindAt,
	"tools.need":          toolsBindAt,
	"tools.always":        {{Types: []string{"string", "Tool"}, Msg: "tools.always expects an alias string or a Tool object, got %[3]s"}, &override},
	"tools.add":           {{Types: []string{"nil", "string", "Tool", "table"}, Msg: ToolsAddShape}, &override},
	"tools.add_local": {
		{Types: []string{"string"}, Msg: "tools.add_local expects alias, description, params table and handler function; alias must be a string, got %[3]s"},
		{Types: []string{"string"}, Msg: "tools.add_local description must be a string, got %[3]s"},
		{Types: []string{"table"}, Msg: "tools.add_local params must be a table, got %[3]s"},
		{Types: []string{"function"}, Msg: "tools.add_local handler must be a function, got %[3]s"},
	},
	"models.bind":    {nil, nil, nil},
	"models.need":    {nil, nil, nil},
	"models.default": {nil, nil, nil},
	"models.use":     {&luaString},
	"models.get":     {&luaString},
	"models.infer":   {&luaString},
	"Model:infer":    {&luaString},
}

// ToolsAddShape is tools.add's message for an argument, or a member of
// its array form, that is neither an alias string nor a Tool object.
const ToolsAddShape = "tools.add expects strings, Tool objects, or arrays of either, got %[3]s"

// ToolsAddMember checks member i (1-based) of tools.add's array form.
func ToolsAddMember(i int, v Value) error {
	if v.Type == "string" || v.Type == "userdata" && (v.Handle == "" || v.Handle == "Tool") {
		return nil
	}
	return fmt.Errorf(ToolsAddShape, i, "tools.add", v.Type)
}

// LocalParamName checks a key of tools.add_local's params table: a
// parameter name, so a string (docs/language.md#local-tools).
func LocalParamName(k Value) error {
	if k.Type != "string" {
		return fmt.Errorf("tools.add_local param names must be strings, got %s", k.Type)
	}
	return nil
}

// LocalParamType checks the JSON type a tools.add_local parameter
// declares.
func LocalParamType(name, typ string) error {
	switch typ {
	case "string", "integer", "number", "boolean":
		return nil
	}
	return fmt.Errorf(`tools.add_local param %q has unsupported type %q: expected "string", "integer", "number", or "boolean"`, name, typ)
}

// ArgError is Arg's error: argument N of Fn refused by its declaration.
type ArgError struct {
	Fn string
	// N is the argument's number (1-based); Got the received type name.
	N    int
	Got  string
	Decl *ArgType
}

func (e *ArgError) Error() string { return fmt.Sprintf(e.Decl.Msg, e.N, e.Fn, e.Got) }

// Detail is the part of a Lua argument error (Decl.Expected set) inside
// its parentheses: "string expected, got table".
func (e *ArgError) Detail() string { return e.Decl.Expected + " expected, got " + e.Got }

// Arg checks argument i (0-based) of host function fn against ArgTypes;
// the error is an *ArgError.
func Arg(fn string, i int, v Value) error {
	ps := ArgTypes[fn]
	if i >= len(ps) || ps[i] == nil {
		return nil
	}
	if ps[i].accepts(v) {
		return nil
	}
	return &ArgError{Fn: fn, N: i + 1, Got: v.Type, Decl: ps[i]}
}

func (a *ArgType) accepts(v Value) bool {
	for _, t := range a.Types {
		switch {
		case t == v.Type:
			if t == "string" && a.Numeric && v.Str != "" && !numeric(v.Str) {
				return false
			}
			return true
		case (t == "Tool" || t == "Model") && v.Type == "userdata" && (v.Handle == "" || v.Handle == t):
			return true
		}
	}
	return false
}

// numeric reports whether s may read as a Lua number (Lua's
// conversion is decimal or prefixed integers, and floats, around
// spaces); it errs towards yes.
func numeric(s string) bool {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// LineRange checks the line numbers of store.read and read_numbered that
// the file's contents do not decide (docs/language.md#line-ranges): the
// runtime truncates them to integers. first and last are nil when
// absent.
func LineRange(path string, first, last *float64) error {
	if last != nil && first == nil {
		return fmt.Errorf("invalid line range for %s: start is required when end is given", path)
	}
	if first != nil && int64(*first) < 1 {
		return fmt.Errorf("invalid line range for %s: start must be at least 1", path)
	}
	return nil
}

// Anchor checks store.str_replace's anchor.
func Anchor(old string) error {
	if old == "" {
		return fmt.Errorf("anchor must not be empty")
	}
	return nil
}

// ModelInferArgs checks the argument count of model:infer: it takes the
// prompt only.
func ModelInferArgs(second Value) error {
	if second.Type != "nil" {
		return fmt.Errorf("model:infer(prompt) does not accept a second argument; per-call inference options are not supported")
	}
	return nil
}

// FanoutMember checks member i (1-based) of a fanout collection: members
// are data, not functions (or userdata, threads).
func FanoutMember(i int, v Value) error {
	switch v.Type {
	case "function", "userdata", "thread":
		return fmt.Errorf("fanout collection member at index %d is a %s; members must be data", i, v.Type)
	}
	return nil
}
