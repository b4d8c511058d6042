package source

import "path/filepath"

// InDir reports whether path is dir or lies under it. It compares the
// cleaned names only (no file system access, links not followed): a name
// that merely starts with two dots, such as "..notes", is inside; "../x"
// and a path on another volume are not. It is the one containment rule of
// the tools (workspace folders, run traces, document links).
func InDir(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}
