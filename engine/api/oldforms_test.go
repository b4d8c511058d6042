package api

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestOldFormsTable(t *testing.T) {
	commit := regexp.MustCompile(`^[0-9a-f]{7}$`)
	date := regexp.MustCompile(`^2026-08-\d\d$`)
	seen := map[string]bool{}
	for i := range OldForms() {
		o := &OldForms()[i]
		if seen[o.Old] {
			t.Errorf("%s listed twice", o.Old)
		}
		seen[o.Old] = true
		if !commit.MatchString(o.Commit) || !date.MatchString(o.Date) || o.New == "" || o.Why == "" {
			t.Errorf("%s: incomplete entry %+v", o.Old, o)
		}
		if o.Safe && o.Rewrite == "" {
			t.Errorf("%s: safe without a rewrite", o.Old)
		}
		if _, ok := Lookup(o.Old); ok && o.Kind == OldMember {
			t.Errorf("%s is an old form and still in the API table", o.Old)
		}
		if got, ok := LookupOld(o.Old); !ok || got != o {
			t.Errorf("LookupOld(%q) = %v, %v", o.Old, got, ok)
		}
		if msg := OldMessage(o); !strings.Contains(msg, o.New) || !strings.Contains(msg, o.Commit) || !strings.Contains(msg, o.Date) {
			t.Errorf("%s: message %q does not name the replacement and the change", o.Old, msg)
		}
	}
}

func TestRenamedTo(t *testing.T) {
	for old, want := range map[string]string{"models.always": "models.default", "models.only": "models.default",
		"store.read_lines": "store.read_numbered", "tools.local": "tools.add_local"} {
		if e, ok := RenamedTo(old); !ok || e.Name != want {
			t.Errorf("RenamedTo(%s) = %v, %v; want %s", old, e, ok, want)
		}
	}
	// store.inject changes shape, sys.taskid is not a call: not renames.
	for _, old := range []string{"store.inject", "sys.taskid", "tools.add", "models.default"} {
		if e, ok := RenamedTo(old); ok {
			t.Errorf("RenamedTo(%s) = %s", old, e.Name)
		}
	}
}

// TestMigrationDocListsEveryOldForm keeps docs/migration.md's table in
// step with the old-forms table.
func TestMigrationDocListsEveryOldForm(t *testing.T) {
	b, err := os.ReadFile("../../docs/migration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, o := range OldForms() {
		old := o.Old
		if o.Kind == OldFence {
			old = "```" + old
		}
		if o.Old == "tools.local" {
			old = "tools['local']"
		}
		if o.Old == "Tool.description" {
			old = ".description = "
		}
		if !strings.Contains(doc, old) || !strings.Contains(doc, o.Commit+" ("+o.Date+")") && !strings.Contains(doc, o.Commit) {
			t.Errorf("docs/migration.md does not list %s with upstream %s", o.Old, o.Commit)
		}
	}
}
