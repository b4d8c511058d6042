package parse

import "github.com/forge-lsp/forge-lsp/engine/source"

// Parse parses a prompt file. It never fails: problems are in Prompt.Errors.
func Parse(name string, content []byte) *Prompt {
	f := source.NewFile(name, content)
	p := &Prompt{File: f}
	return p
}
