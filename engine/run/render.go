package run

import (
	"fmt"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/api"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/template"
	lua "github.com/yuin/gopher-lua"
)

// Placeholder error kinds that depend on run-time values
// (docs/language.md#placeholder-errors).
const (
	errUnknownNamespace = "UnknownNamespace"
	errMissingKey       = "MissingKey"
	errNullValue        = "NullValue"
	errNilReply         = "NilReply"
	errNilItem          = "NilItem"
	errSerialize        = "Serialize"
)

// subErr is a Substitution run error: "<message> [<Kind> at byte <n>]",
// n being the offset of the "{{" inside the prose block.
func (vm *VM) subErr(pr *parse.Prose, kind string, n template.Node, msg string) error {
	off := n.Span.Start - pr.Span.Start
	line := 0
	if vm.r.p.File != nil {
		line = vm.r.p.File.Line(n.Span.Start)
	}
	return &RunError{Kind: KindSubstitution, Variant: kind, Line: line, Msg: fmt.Sprintf("%s [%s at byte %d]", msg, kind, off)}
}

// render substitutes the placeholders of a prose block
// (docs/language.md#placeholders). One pass; values are never rescanned.
func (vm *VM) render(pr *parse.Prose, reply *string) (string, error) {
	if !strings.Contains(pr.Text, "{") && !strings.Contains(pr.Text, "\\") {
		return pr.Text, nil
	}
	t, terr := template.Parse(pr.Text, pr.Span.Start)
	if terr != nil {
		off := terr.Span.Start - pr.Span.Start
		line := 0
		if vm.r.p.File != nil {
			line = vm.r.p.File.Line(terr.Span.Start)
		}
		return "", &RunError{Kind: KindSubstitution, Variant: terr.Kind, Line: line, Msg: fmt.Sprintf("%s [%s at byte %d]", terr.Message, terr.Kind, off)}
	}
	var sb strings.Builder
	for _, n := range t.Nodes {
		if n.Kind == template.Text {
			sb.WriteString(n.Text)
			continue
		}
		if e := template.Check(&n); e != nil {
			return "", vm.subErr(pr, e.Kind, n, e.Message)
		}
		s, err := vm.resolvePlaceholder(pr, n, reply)
		if err != nil {
			return "", err
		}
		sb.WriteString(s)
	}
	return sb.String(), nil
}

func (vm *VM) resolvePlaceholder(pr *parse.Prose, n template.Node, reply *string) (string, error) {
	ph := "placeholder `{{ " + n.Text + " }}`"
	switch n.Text {
	case "args":
		return vm.fr.args(vm.r), nil
	case "reply":
		if reply == nil {
			return "", vm.subErr(pr, errNilReply, n, ph+": there is no reply yet (the first section, an execute chain and the H1 start without one)")
		}
		return *reply, nil
	case "item":
		if vm.Kind != VMArm || vm.fr.arm == nil {
			return "", vm.subErr(pr, errNilItem, n, ph+": `item` exists only in fanout arms")
		}
		if vm.fr.arm.item == nil {
			return "null", nil
		}
		return renderValue(vm.fr.arm.item), nil
	}
	segs := n.Segments
	root := segs[0].Name
	var cur any
	switch root {
	case "var":
		cur = vm.vars.root
	case "sys":
		v, ok := vm.sys[segs[1].Name]
		if !ok {
			// A key the engine never sets fails the same way wherever it
			// stands, in the checker's words (template.CheckKey).
			if e := template.CheckKey(&n); e != nil {
				return "", vm.subErr(pr, e.Kind, n, e.Message)
			}
			msg := fmt.Sprintf("%s: sys has no field `%s` here", ph, segs[1].Name)
			if e, ok := api.Lookup("sys." + segs[1].Name); ok {
				msg += " (" + e.Signature + ": " + e.Doc + ")"
			}
			return "", vm.subErr(pr, errMissingKey, n, msg)
		}
		x, err := toValue(v, nil, false, 0)
		if err != nil {
			return "", vm.subErr(pr, errSerialize, n, ph+": "+err.Error())
		}
		cur = x
		segs = segs[1:]
	default:
		g := vm.L.GetGlobal(root)
		switch g.Type() {
		case lua.LTNil:
			msg := fmt.Sprintf("%s: `%s` is not a global of this section (locals are invisible; set a global or use var.%s)", ph, root, root)
			if o, old := api.LookupOld(root); old && o.Kind == api.OldGlobal {
				msg += ": " + api.OldMessage(o)
			}
			return "", vm.subErr(pr, errUnknownNamespace, n, msg)
		case lua.LTFunction, lua.LTThread:
			return "", vm.subErr(pr, errSerialize, n, fmt.Sprintf("%s: `%s` is a %s, which cannot be rendered", ph, root, g.Type()))
		case lua.LTUserData:
			if vm.vars.nodeOf(g) == nil {
				return "", vm.subErr(pr, errSerialize, n, fmt.Sprintf("%s: `%s` is a userdata, which cannot be rendered", ph, root))
			}
		}
		x, err := toValue(g, vm.vars.nodeOf, true, 0)
		if err != nil {
			return "", vm.subErr(pr, errSerialize, n, ph+": "+err.Error())
		}
		cur = x
	}
	for i, s := range segs[1:] {
		nd, ok := cur.(*node)
		var next any
		found := false
		if ok && nd.isObj {
			next, found = nd.obj[s.Name]
		}
		if !found {
			path := root
			for _, p := range segs[1 : i+2] {
				path += "." + p.Name
			}
			if root == "sys" {
				path = "sys." + strings.TrimPrefix(path, "sys.")
			}
			return "", vm.subErr(pr, errMissingKey, n, ph+": "+missingKey(cur, path, s.Name))
		}
		cur = next
	}
	if cur == nil {
		return "", vm.subErr(pr, errNullValue, n, ph+": the value is null")
	}
	return renderValue(cur), nil
}

// renderValue renders a value: strings verbatim, other scalars as JSON
// text, tables as compact JSON.
func renderValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

// missingKey says why key is not found in cur, the value at path's parent:
// arrays are named only when one is involved.
func missingKey(cur any, path, key string) string {
	parent := path[:len(path)-len(key)-1]
	nd, ok := cur.(*node)
	switch {
	case ok && nd.isObj:
		return fmt.Sprintf("no key `%s` (%s is missing)", key, path)
	case ok && len(nd.arr) == 0:
		return fmt.Sprintf("no key `%s` (%s is an empty table)", key, parent)
	case ok:
		return fmt.Sprintf("no key `%s`: %s is an array, and arrays cannot be indexed in a placeholder", key, parent)
	}
	return fmt.Sprintf("no key `%s`: %s is %s, not a table", key, parent, jsonKind(cur))
}

// jsonKind names a converted scalar for messages ("a string").
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}
