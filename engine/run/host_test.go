package run

import (
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/api"
)

// TestHostFuncsMatchAPI checks that every host function engine/api lists
// (synonyms included) has an implementation, and that every
// implementation is listed there.
func TestHostFuncsMatchAPI(t *testing.T) {
	listed := map[string]bool{}
	for _, e := range api.All() {
		// Handle members (Tool.name, Model:infer) belong to handles.
		root, _, _ := strings.Cut(strings.ReplaceAll(e.Name, ":", "."), ".")
		if !e.Host || !e.IsFunc() || root == "Tool" || root == "Model" {
			continue
		}
		for _, name := range append([]string{e.Name}, e.Synonyms...) {
			listed[name] = true
			if _, ok := hostFuncs()[name]; !ok {
				t.Errorf("%s is in engine/api but has no implementation in hostFuncs", name)
			}
		}
	}
	for name := range hostFuncs() {
		if !listed[name] {
			t.Errorf("hostFuncs implements %s, which engine/api does not list as a host function", name)
		}
	}
}

// TestMisplacedMessages pins upstream's texts for a call in the wrong
// place, derived from the api placement.
func TestMisplacedMessages(t *testing.T) {
	for name, want := range map[string]string{
		"tools.bind":      "tools.bind is only available during live H1 execution",
		"models.need":     "models.need is only available during live H1 execution",
		"tools.add":       "tools.add is only available during H2 recording",
		"models.use":      "models.use is only available during H2 recording",
		"tools.add_local": "tools.add_local is only available in sections (## headings); local tools are H2-only",
		"fanout":          "fanout is only available in sections (## headings); H1 runs before sections exist",
	} {
		e, ok := api.Lookup(name)
		if !ok {
			t.Fatalf("%s not in api", name)
		}
		member := ""
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			member = name[i+1:]
		}
		if got := misplaced(hostName{name: name, member: member, entry: e}); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestFrozenToolDescriptionNamesOverride(t *testing.T) {
	got := frozen("Tool")("description")
	for _, want := range []string{`cannot assign field "description"`, "tools.add(alias, text)", "upstream 5feeee1, 2026-08-19"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not contain %q", got, want)
		}
	}
	if got := frozen("Tool")("name"); strings.Contains(got, "upstream") {
		t.Errorf("name write: %q", got)
	}
}
