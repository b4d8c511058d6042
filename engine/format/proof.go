package format

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/yuin/gopher-lua/ast"
	yaml "go.yaml.in/yaml/v3"
)

// Prove checks that b, the parse of a formatted prompt, means what a, the
// parse of the original, means: no parse error, the same frontmatter
// (YAML values, keys in order, comments), the same title, sections,
// blocks and list items, each prose block the same text (what the model
// receives), and each Lua chunk the same syntax tree, positions aside,
// with the same comments. It returns what differs first.
func Prove(a, b *parse.Prompt) error {
	if len(b.Errors) != len(a.Errors) {
		e := b.Errors[0]
		line, col := b.File.Position(e.Span.Start)
		return fmt.Errorf("the result has a parse error at %d:%d: %s", line, col, e.Message)
	}
	if err := sameFrontmatter(a, b); err != nil {
		return err
	}
	if a.Title != b.Title || a.Description != b.Description {
		return fmt.Errorf("the title or the H1 prose changed")
	}
	if err := sameChunk("shared library", a.Shared, b.Shared); err != nil {
		return err
	}
	if err := sameBlocks("H1", a.H1Blocks, b.H1Blocks); err != nil {
		return err
	}
	return sameSections(a.Sections, b.Sections)
}

func sameSections(as, bs []*parse.Section) error {
	if len(as) != len(bs) {
		return fmt.Errorf("the number of sections changed from %d to %d", len(as), len(bs))
	}
	for i, x := range as {
		y := bs[i]
		if x.Name != y.Name || x.Level != y.Level || x.OffWalk != y.OffWalk || x.IsList != y.IsList || (x.Heading.Setext != y.Heading.Setext) {
			return fmt.Errorf("section %q changed its heading or kind", x.Address())
		}
		if len(x.Items) != len(y.Items) {
			return fmt.Errorf("section %q: the list items changed", x.Address())
		}
		for k := range x.Items {
			if x.Items[k].Text != y.Items[k].Text {
				return fmt.Errorf("section %q: list item %d changed", x.Address(), k+1)
			}
		}
		if err := sameBlocks("section "+x.Address(), x.Blocks, y.Blocks); err != nil {
			return err
		}
		if err := sameSections(x.Children, y.Children); err != nil {
			return err
		}
	}
	return nil
}

func sameBlocks(where string, as, bs []*parse.Block) error {
	if len(as) != len(bs) {
		return fmt.Errorf("%s: the number of blocks changed from %d to %d", where, len(as), len(bs))
	}
	for i, x := range as {
		y := bs[i]
		if x.Kind != y.Kind {
			return fmt.Errorf("%s: block %d changed kind", where, i+1)
		}
		if x.Kind == parse.ProseBlock {
			if x.Prose.Text != y.Prose.Text || x.Prose.LoopCapable != y.Prose.LoopCapable {
				return fmt.Errorf("%s: the text of prose block %d changed", where, i+1)
			}
			continue
		}
		if err := sameChunk(where, x.Chunk, y.Chunk); err != nil {
			return err
		}
	}
	return nil
}

func sameChunk(where string, a, b *parse.Chunk) error {
	if (a == nil) != (b == nil) {
		return fmt.Errorf("%s: a Lua chunk appeared or disappeared", where)
	}
	if a == nil {
		return nil
	}
	if a.Label != b.Label || a.Shared != b.Shared {
		return fmt.Errorf("%s: chunk %s changed its label", where, a.Label)
	}
	if !sameAST(reflect.ValueOf(a.AST), reflect.ValueOf(b.AST)) {
		return fmt.Errorf("%s: the Lua syntax tree of %s changed", where, a.Label)
	}
	ca, cb := commentsOf(a.Source), commentsOf(b.Source)
	if len(ca) != len(cb) {
		return fmt.Errorf("%s: %s has %d comments instead of %d", where, a.Label, len(cb), len(ca))
	}
	for i := range ca {
		if ca[i] != cb[i] {
			return fmt.Errorf("%s: comment %d of %s changed", where, i+1, a.Label)
		}
	}
	return nil
}

// commentsOf lists a chunk's comments in order (line comments without
// trailing white space).
func commentsOf(src string) []string {
	var cs []string
	for _, t := range lexChunk(src) {
		for _, c := range t.pre {
			cs = append(cs, c.text)
		}
	}
	return cs
}

var nodeType = reflect.TypeOf(ast.Node{})

// sameAST compares two gopher-lua syntax trees, skipping their positions
// (the ast.Node each node embeds).
func sameAST(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Interface, reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Kind() == reflect.Interface && a.Elem().Type() != b.Elem().Type() {
			return false
		}
		return sameAST(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !sameAST(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() != b.Type() {
			return false
		}
		if a.Type() == nodeType {
			return true
		}
		for i := 0; i < a.NumField(); i++ {
			if !sameAST(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	}
	return false
}

func sameFrontmatter(a, b *parse.Prompt) error {
	fa, fb := a.Frontmatter, b.Frontmatter
	if (fa == nil) != (fb == nil) {
		return fmt.Errorf("the frontmatter appeared or disappeared")
	}
	if fa == nil {
		return nil
	}
	ya, yb := a.File.Text(fa.YAML), b.File.Text(fb.YAML)
	if ya == yb {
		return nil
	}
	var na, nb yaml.Node
	ea, eb := yaml.Unmarshal([]byte(ya), &na), yaml.Unmarshal([]byte(yb), &nb)
	if (ea == nil) != (eb == nil) {
		return fmt.Errorf("the frontmatter's YAML no longer parses the same")
	}
	if ea != nil {
		return fmt.Errorf("the frontmatter's YAML does not parse, so it cannot change")
	}
	if !sameYAML(&na, &nb) {
		return fmt.Errorf("the frontmatter's values or comments changed")
	}
	return nil
}

func sameYAML(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Anchor != b.Anchor ||
		a.Style&^yaml.FlowStyle != b.Style&^yaml.FlowStyle ||
		strings.TrimSpace(a.HeadComment) != strings.TrimSpace(b.HeadComment) ||
		strings.TrimSpace(a.LineComment) != strings.TrimSpace(b.LineComment) ||
		strings.TrimSpace(a.FootComment) != strings.TrimSpace(b.FootComment) ||
		len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameYAML(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
