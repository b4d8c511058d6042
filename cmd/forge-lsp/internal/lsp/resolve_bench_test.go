package lsp

import (
	"path/filepath"
	"testing"

	"go.lsp.dev/protocol"
)

// BenchmarkResolveInputs is what each snapshot of an open document spends
// resolving its configuration and tool catalog: a prompt in the
// package's testdata folder (no .forge-lsp.json at or above it), and one
// in a folder that does not exist (the typing benchmark's documents).
func BenchmarkResolveInputs(b *testing.B) {
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, file string }{
		{"testdata", filepath.Join(testdata, "resolve.md")},
		{"missing", "/forge-lsp-resolve-bench/a/b/p.md"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newServer(options{})
			r := s.resolver(protocol.DocumentURI("file://"+filepath.ToSlash(bc.file)), bc.file)
			b.ReportAllocs()
			for b.Loop() {
				r()
			}
		})
	}
}
