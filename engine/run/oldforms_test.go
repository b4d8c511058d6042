package run

import "testing"

// TestOldFormsRefused runs a prompt that calls every refused old form
// under pcall (docs/migration.md): each error names the replacement and
// the upstream change. It is outside testdata/run, whose prompts the
// checker's differential test compares with the checker.
func TestOldFormsRefused(t *testing.T) {
	runCase(t, "testdata/old_forms_refused.txtar")
}
