package api

import (
	"sort"
	"strings"
	"testing"
)

func TestParams(t *testing.T) {
	tests := map[string]string{
		"tools.bind":      "alias:string capability:string override?:string",
		"tools.add":       "alias|Tool|{alias|Tool...}: override?:string",
		"tools.add_local": "alias:string description:string params:table handler:function(args) -> string",
		"models.bind":     "alias:string description:string opts?:{thinking?, context?, temperature?, max_tokens?}",
		"Model:infer":     "prompt:string",
		"jump":            `target:"## Heading"`,
		"string.format":   "...:",
		"pcall":           "f: ...:",
	}
	for name, want := range tests {
		e, ok := Lookup(name)
		if !ok {
			t.Fatalf("no entry %s", name)
		}
		var got []string
		for _, p := range e.Params() {
			opt := ""
			if p.Optional {
				opt = "?"
			}
			got = append(got, p.Name+opt+":"+p.Type)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s params = %q, want %q", name, g, want)
		}
	}
	var sections []string
	for _, e := range All() {
		if e.TakesSection() {
			sections = append(sections, e.Name)
		}
	}
	if g := strings.Join(sections, " "); g != "jump execute fanout list_from_section" {
		t.Errorf("section-taking functions: %s", g)
	}
	if p := (&Entry{Name: "x", Kind: Value, Signature: "x(a)"}).Params(); p != nil {
		t.Errorf("a value has params %v", p)
	}
}

// TestSignaturesParse: every function's signature has balanced brackets,
// and each parameter's offsets cover its text.
func TestSignaturesParse(t *testing.T) {
	for _, e := range All() {
		if !e.IsFunc() {
			continue
		}
		sig := e.Signature
		if !strings.HasPrefix(sig, e.Name+"(") {
			t.Errorf("%s: signature %q does not start with the name", e.Name, sig)
		}
		open := strings.IndexByte(sig, '(')
		if open < 0 || strings.Count(sig, "(") != strings.Count(sig, ")") || strings.Count(sig, "{") != strings.Count(sig, "}") {
			t.Errorf("%s: unbalanced signature %q", e.Name, sig)
			continue
		}
		for _, p := range e.Params() {
			text := sig[p.Start:p.End]
			if !strings.HasPrefix(text, p.Name) || text != strings.TrimSpace(text) {
				t.Errorf("%s: param %+v covers %q", e.Name, p, text)
			}
		}
	}
}

// TestTakesSectionMatchesParams: the allocation-free TakesSection agrees
// with the first parsed parameter for every entry, and names exactly the
// control functions.
func TestTakesSectionMatchesParams(t *testing.T) {
	var names []string
	for _, e := range All() {
		ps := e.Params()
		want := len(ps) > 0 && ps[0].Type == SectionAddress
		if got := e.TakesSection(); got != want {
			t.Errorf("%s: TakesSection = %v, first parameter says %v", e.Name, got, want)
		}
		if want {
			names = append(names, e.Name)
		}
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "execute,fanout,jump,list_from_section" {
		t.Errorf("entries taking a section: %s", got)
	}
	e, _ := Lookup("jump")
	if n := testing.AllocsPerRun(100, func() { e.TakesSection() }); n != 0 {
		t.Errorf("TakesSection allocates %v times", n)
	}
}
