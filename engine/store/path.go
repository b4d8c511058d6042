package store

import "github.com/forge-lsp/forge-lsp/engine/rules"

// ValidatePath checks the store path rules (docs/language.md#store-paths).
// The rule itself lives in engine/rules, so the analyzer checks literal
// paths with the same code; failures are *Error of kind InvalidPath.
func ValidatePath(p string) error {
	if err := rules.StorePath(p); err != nil {
		return &Error{Kind: InvalidPath, Path: p, Msg: err.Error()}
	}
	return nil
}

// Glob is a compiled glob pattern.
type Glob = rules.Glob

// CompileGlob checks the glob syntax of docs/language.md#store-globs and
// compiles the pattern; failures are *Error of kind InvalidPattern.
func CompileGlob(p string) (*Glob, error) {
	g, err := rules.CompileGlob(p)
	if err != nil {
		return nil, &Error{Kind: InvalidPattern, Path: p, Msg: err.Error()}
	}
	return g, nil
}
