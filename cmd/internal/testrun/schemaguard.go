package testrun

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// MaxSchemaDepth caps how deeply a test file's json_schema nests (objects
// and arrays counted alike). Real schemas stay far below it; the validator
// recurses once per level.
const MaxSchemaDepth = 64

// guardSchema rejects a decoded JSON schema the validator would recurse on
// without end, before it is compiled: nesting deeper than MaxSchemaDepth,
// or a cycle of references that applies a schema to the same value again
// ({"$ref": "#"}, or A → allOf → B → $ref A). Recursion through a
// property or an item (a tree schema) is fine: each step goes one level
// down the value, which is finite. The walk follows references inside the
// document only; the loader refuses every other reference anyway.
func guardSchema(doc any) error {
	if d := depthOf(doc, 0); d > MaxSchemaDepth {
		return fmt.Errorf("the schema nests more than %d levels deep; flatten it or use $defs", MaxSchemaDepth)
	}
	g := &schemaGraph{root: doc, byPtr: map[string]any{}, anchors: map[string][]string{}, ids: map[string]string{}}
	g.index(doc, "")
	return g.findCycle()
}

// depthOf returns the nesting depth of v, stopping just past the cap.
func depthOf(v any, d int) int {
	if d > MaxSchemaDepth {
		return d
	}
	best := d
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			best = max(best, depthOf(c, d+1))
		}
	case []any:
		for _, c := range x {
			best = max(best, depthOf(c, d+1))
		}
	}
	return best
}

type schemaGraph struct {
	root    any
	byPtr   map[string]any      // JSON pointer → schema object
	anchors map[string][]string // $anchor and $dynamicAnchor name → pointers
	ids     map[string]string   // $id → pointer
}

// inPlace are the keywords whose subschemas apply to the same value.
var inPlace = []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"}

func (g *schemaGraph) index(v any, ptr string) {
	switch x := v.(type) {
	case map[string]any:
		g.byPtr[ptr] = x
		for _, k := range []string{"$anchor", "$dynamicAnchor"} {
			if a, ok := x[k].(string); ok {
				g.anchors[a] = append(g.anchors[a], ptr)
			}
		}
		if id, ok := x["$id"].(string); ok {
			g.ids[strings.TrimSuffix(id, "#")] = ptr
		}
		for k, c := range x {
			g.index(c, ptr+"/"+escapePtr(k))
		}
	case []any:
		for i, c := range x {
			g.index(c, ptr+"/"+strconv.Itoa(i))
		}
	}
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// edges are the schemas that apply to the same value as the one at ptr.
func (g *schemaGraph) edges(ptr string) []string {
	s, _ := g.byPtr[ptr].(map[string]any)
	var out []string
	for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
		if ref, ok := s[k].(string); ok {
			out = append(out, g.resolve(ref)...)
		}
	}
	for _, k := range inPlace {
		switch c := s[k].(type) {
		case map[string]any:
			if k == "dependentSchemas" {
				for name := range c {
					out = append(out, ptr+"/"+k+"/"+escapePtr(name))
				}
			} else {
				out = append(out, ptr+"/"+k)
			}
		case []any:
			for i := range c {
				out = append(out, ptr+"/"+k+"/"+strconv.Itoa(i))
			}
		}
	}
	return out
}

// resolve finds the schemas a reference may name inside the document.
func (g *schemaGraph) resolve(ref string) []string {
	base, frag, _ := strings.Cut(ref, "#")
	start := ""
	if base != "" {
		p, ok := g.ids[base]
		if !ok {
			// An $id given as a relative reference: match its last segment.
			for id, q := range g.ids {
				if u, err := url.Parse(id); err == nil && strings.HasSuffix(u.Path, "/"+strings.TrimPrefix(base, "/")) {
					p, ok = q, true
				}
			}
		}
		if !ok {
			return nil
		}
		start = p
	}
	switch {
	case frag == "" || frag == "/":
		if frag == "/" {
			return nil
		}
		return []string{start}
	case strings.HasPrefix(frag, "/"):
		if u, err := url.PathUnescape(frag); err == nil {
			frag = u
		}
		return []string{start + frag}
	default:
		return g.anchors[frag]
	}
}

// findCycle reports the first cycle of in-place applications, in a
// stable order.
func (g *schemaGraph) findCycle() error {
	ptrs := make([]string, 0, len(g.byPtr))
	for p := range g.byPtr {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(p string) []string
	visit = func(p string) []string {
		if _, ok := g.byPtr[p]; !ok {
			return nil
		}
		switch state[p] {
		case active:
			for i, q := range stack {
				if q == p {
					return append(append([]string(nil), stack[i:]...), p)
				}
			}
		case done:
			return nil
		}
		state[p] = active
		stack = append(stack, p)
		for _, q := range g.edges(p) {
			if c := visit(q); c != nil {
				return c
			}
		}
		stack = stack[:len(stack)-1]
		state[p] = done
		return nil
	}
	for _, p := range ptrs {
		if c := visit(p); c != nil {
			for i, q := range c {
				c[i] = "#" + q
			}
			return fmt.Errorf("the schema refers to itself without going into the value (%s), so validating would never end; a recursive schema must go through properties or items", strings.Join(c, " → "))
		}
	}
	return nil
}
