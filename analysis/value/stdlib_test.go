package value

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestStdlibArgsMatchRuntime proves stdlibArgs against the VM: each
// listed argument of each function, given a value of each type while the
// others are valid, fails in gopher-lua with "bad argument #i" exactly
// when argFails says it must.
func TestStdlibArgsMatchRuntime(t *testing.T) {
	valid := map[argKind]string{argUnchecked: `{}`, argIntIfGiven: `1`, argString: `"abc"`, argNumber: `2`, argInt: `1`, argOptInt: `1`,
		argOptString: `","`, argTable: `{"a", "b"}`, argOptNilTable: `{}`}
	// Arguments after the listed ones that a call needs to run.
	extra := map[string]string{"string.gsub": `"x"`, "table.insert": `"v"`}
	probes := []struct {
		lua string
		v   Value
	}{
		{`nil`, NilValue}, {`true`, Bool(true)}, {`"x"`, Str("x")}, {`"3"`, Str("3")},
		{`3`, Num(3)}, {`{}`, Value{T: Table, Shape: &Shape{}}},
	}
	L := lua.NewState()
	defer L.Close()
	names := make([]string, 0, len(stdlibArgs))
	for n := range stdlibArgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		kinds := stdlibArgs[name]
		for i, k := range kinds {
			for _, p := range probes {
				args := make([]string, len(kinds))
				for j, kj := range kinds {
					args[j] = valid[kj]
				}
				args[i] = p.lua
				if x := extra[name]; x != "" {
					args = append(args, x)
				}
				call := fmt.Sprintf("%s(%s)", name, strings.Join(args, ", "))
				err := L.DoString("local ok, err = pcall(function() return " + call + " end) if not ok then error(err, 0) end")
				failed := err != nil && strings.Contains(err.Error(), fmt.Sprintf("bad argument #%d", i+1))
				if want := argFails(k, p.v) != ""; failed != want {
					t.Errorf("%s: the VM fails: %v (%v); stdlibArgs says %v", call, failed, err, want)
				}
			}
		}
	}
}
