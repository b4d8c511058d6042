// Package rules holds the argument rules the engine enforces when a host
// function runs, as pure functions over a small value description. The
// runtime (engine/run) calls them on the values a Lua call passes; the
// analyzer (analysis/passes/callargs, modelopts) calls them on literal arguments, so
// a rule and its message are written once. Store path and glob rules live
// in engine/store (ValidatePath, CompileGlob), which is pure as well.
package rules

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// LogMessageRunes caps one log message.
const LogMessageRunes = 256

// MaxDepth caps execute/fanout nesting.
const MaxDepth = 8

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
// other. Strict string parameters refuse numbers too; the store's
// parameters convert a number, as Lua's string functions do.
type ArgType struct {
	// Types are the accepted type names; Msg formats the failure with
	// the received type name.
	Types []string
	Msg   string
}

var (
	storeString = ArgType{Types: []string{"string", "number"}, Msg: "bad argument #%d to %s (string expected, got %s)"}
	storeLine   = ArgType{Types: []string{"number", "string", "nil"}, Msg: "bad argument #%d to %s (number expected, got %s)"}
)

// ArgTypes are the parameters whose types the runtime checks, by entry
// name; a nil member is a parameter checked elsewhere (a section
// address, an opts table).
var ArgTypes = map[string][]*ArgType{
	"log":                 {{Types: []string{"string"}, Msg: "log message must be a string, got %[3]s"}},
	"untrusted":           {{Types: []string{"string"}, Msg: "untrusted expects a string, got %[3]s"}},
	"execute":             {nil, {Types: []string{"string", "nil"}, Msg: "execute input must be a string or nil, got %[3]s"}},
	"store.write":         {&storeString, &storeString},
	"store.append":        {&storeString, &storeString},
	"store.read":          {&storeString, &storeLine, &storeLine},
	"store.read_numbered": {&storeString, &storeLine, &storeLine},
	"store.str_replace":   {&storeString, &storeString, &storeString},
	"store.delete":        {&storeString},
	"store.glob":          {&storeString},
	"store.exists":        {&storeString},
}

// Arg checks argument i (0-based) of host function fn against ArgTypes.
func Arg(fn string, i int, v Value) error {
	ps := ArgTypes[fn]
	if i >= len(ps) || ps[i] == nil {
		return nil
	}
	for _, t := range ps[i].Types {
		if t == v.Type {
			return nil
		}
	}
	return fmt.Errorf(ps[i].Msg, i+1, fn, v.Type)
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
