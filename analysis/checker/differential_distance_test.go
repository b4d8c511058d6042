package checker_test

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
)

// The distance transform of the differential test (differential_test.go):
// each failing value of a class mutant re-expressed one to three steps
// away from its use.

// distanceValue is a failing value of a class mutant and its use: the
// run fails at the use whatever step brought the value there.
type distanceValue struct {
	class, name string
	// value is the Lua expression of the value; pre runs before the
	// use; use has %s where the value goes.
	value, pre, use string
	// noList is set for nil, which a list cannot hold.
	noList bool
}

var distanceValues = []distanceValue{
	{"1-locals", "log-newline", `"one\ntwo"`, "", "log(%s)\n", false},
	{"1-locals", "concat-nil", "nil", "", "local title = \"Report: \" .. args .. %s\n", true},
	{"1-locals", "rep-log", `string.rep("=", 300)`, "", "log(%s)\n", false},
	{"1-locals", "bad-path", `"a\\b.md"`, "", "store.write(%s, \"x\")\n", false},
	{"1-locals", "empty-anchor", `""`, "store.write(\"mut.txt\", \"a\")\n", "store.str_replace(\"mut.txt\", %s, \"b\")\n", false},
	{"2-types", "table-untrusted", `{title = "t"}`, "", "local safe = untrusted(%s)\n", false},
	{"4-store", "anchor-twice", `"a a"`, "", "store.write(\"mut.txt\", %s)\nstore.str_replace(\"mut.txt\", \"a\", \"b\")\n", false},
	{"8-names", "unknown-target", `"## Mut nowhere"`, "", "jump(%s)\n", false},
	{"8-names", "bad-alias", `"mut alias"`, "", "tools.add(%s)\n", false},
}

// distanceTransforms name the steps between a value's creation and its
// use: a shared-library constant, a field of a shared-library table, a
// shared-library helper's result, a local helper's result, a loop
// variable over a constant list, a local helper's parameter (the use in
// its body), a field of a table read in its method, a var key an earlier
// section writes.
var distanceTransforms = []string{"shared-const", "shared-field", "shared-helper", "local-helper", "loop", "local-helper-body", "method", "var-earlier"}

type distanceSample struct{ name, text string }

// distanceMutants re-expresses failing values at a distance in the Lua
// block whose body starts at offset at. Each prompt gets two values per
// transform (chosen by its id), so the corpus covers every pair.
func distanceMutants(id, src string, at int) []distanceSample {
	h := fnv.New32a()
	h.Write([]byte(id))
	k := int(h.Sum32())
	h1 := h1RE.FindStringIndex(src)
	var out []distanceSample
	for ti, tr := range distanceTransforms {
		for j := 0; j < 2; j++ {
			d := distanceValues[(k+ti+j*3)%len(distanceValues)]
			var shared, code string
			switch tr {
			case "shared-const":
				shared, code = "MUT_V = "+d.value+"\n", d.pre+fmt.Sprintf(d.use, "MUT_V")
			case "shared-field":
				shared, code = "MUT_T = {v = "+d.value+", other = 1}\n", d.pre+fmt.Sprintf(d.use, "MUT_T.v")
			case "shared-helper":
				shared, code = "function mut_v()\n  return "+d.value+"\nend\n", d.pre+fmt.Sprintf(d.use, "mut_v()")
			case "local-helper":
				code = "local function mut_v(x)\n  return x\nend\n" + d.pre + fmt.Sprintf(d.use, "mut_v("+d.value+")")
			case "local-helper-body":
				// The use is in the helper's body, the value its argument.
				code = d.pre + "local function mut_use(mut_v)\n" + fmt.Sprintf(d.use, "mut_v") + "end\nmut_use(" + d.value + ")\n"
			case "method":
				// The use is in a method of a local table, the value a
				// field of the table.
				code = d.pre + "local mut_o = {v = " + d.value + "}\nfunction mut_o:use()\n" + fmt.Sprintf(d.use, "self.v") + "end\nmut_o:use()\n"
			case "loop":
				if d.noList {
					continue
				}
				// The spaces keep {{ out of the text (a fence inside a
				// longer fence is prose, where {{ is a placeholder).
				code = d.pre + "for _, mut_v in ipairs({ " + d.value + " }) do\n" + fmt.Sprintf(d.use, "mut_v") + "end\n"
			}
			text := src[:at] + code + src[at:]
			if tr == "var-earlier" {
				// A section of the same level just before the block's
				// section writes the value into var; the block reads it.
				own := -1
				heads := sectionRE.FindAllStringSubmatchIndex(src, -1)
				for i, h := range heads {
					if h[0] < at {
						own = i
					}
				}
				if own < 0 {
					continue
				}
				h := heads[own]
				level := src[h[2]:h[3]]
				set := level + " Mut set\n\n```lua\nvar.mut_v = " + d.value + "\n```\n\n"
				code = d.pre + fmt.Sprintf(d.use, "var.mut_v")
				text = src[:h[0]] + set + src[h[0]:at] + code + src[at:]
			}
			if shared != "" {
				if h1 == nil || h1[1] > at {
					continue
				}
				if i := strings.Index(src, "```lua shared\n"); i >= 0 && i < at {
					i += len("```lua shared\n")
					text = src[:i] + shared + src[i:at] + code + src[at:]
				} else {
					text = src[:h1[1]] + "\n```lua shared\n" + shared + "```\n" + src[h1[1]:at] + code + src[at:]
				}
			}
			out = append(out, distanceSample{"distance-" + tr + "-" + d.name, text})
		}
	}
	return out
}

// h1RE finds the H1 line, after which a shared library may go.
var h1RE = regexp.MustCompile(`(?m)^# .*\n`)
