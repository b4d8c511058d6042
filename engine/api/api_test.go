package api

import (
	"strings"
	"testing"
)

func TestTableConsistency(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range All() {
		if seen[e.Name] {
			t.Errorf("duplicate entry %s", e.Name)
		}
		seen[e.Name] = true
		if e.Allowed&^e.Defined != 0 {
			t.Errorf("%s: allowed in %v but defined only in %v", e.Name, e.Allowed, e.Defined)
		}
		if e.Signature == "" || e.Doc == "" {
			t.Errorf("%s: missing signature or doc", e.Name)
		}
		if IsRemoved(e.Name) {
			t.Errorf("%s is both provided and removed", e.Name)
		}
		if i := strings.LastIndexAny(e.Name, ".:"); i > 0 {
			root := e.Name[:i]
			if _, ok := Lookup(root); !ok && root != "Tool" && root != "Model" {
				t.Errorf("%s: parent %s is not in the table", e.Name, root)
			}
		}
	}
}

func TestLookupAndContexts(t *testing.T) {
	e, ok := Lookup("tools.need")
	if !ok || e.Name != "tools.bind" || e.Allowed != H1 {
		t.Fatalf("tools.need: %+v", e)
	}
	if e, _ := Lookup("tools.add_local"); e.Allowed&H1 != 0 {
		t.Error("tools.add_local must not be allowed in H1 (docs/language.md#local-tools)")
	}
	if e, _ := Lookup("models.get"); e.Defined&H1 != 0 {
		t.Error("models.get must not exist in H1 (docs/language.md#h1-pass)")
	}
	if e, _ := Lookup("jump"); e.Allowed != Section {
		t.Errorf("jump allowed in %v, want sections only (not handlers or the shared load)", e.Allowed)
	}
	for _, g := range []string{"print", "require", "io", "os", "load", "dofile"} {
		if !IsRemoved(g) {
			t.Errorf("%s should be removed", g)
		}
	}
	h1 := strings.Join(Globals(H1), " ")
	for _, g := range []string{"tools", "models", "args", "var", "sys", "log", "store", "string", "pcall"} {
		if !strings.Contains(" "+h1+" ", " "+g+" ") {
			t.Errorf("H1 globals lack %s: %s", g, h1)
		}
	}
	tools := strings.Join(Members("tools", Anywhere), " ")
	if tools != "add add_local always bind calls need" {
		t.Errorf("tools members %q", tools)
	}
	if m := strings.Join(Members("tools", H1), " "); strings.Contains(m, "calls") {
		t.Errorf("H1 tools members %q", m)
	}
	if !IsTable("store") || IsTable("var") || IsTable("tools.calls") {
		t.Error("IsTable")
	}
	if H1.String() != "H1" || (Section|Handler).String() != "sections, add_local handlers" {
		t.Errorf("Where.String: %q", (Section | Handler).String())
	}
}
