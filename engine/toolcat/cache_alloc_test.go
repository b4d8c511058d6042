package toolcat

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

func writeTools(tb testing.TB) string {
	tb.Helper()
	tf := filepath.Join(tb.TempDir(), toolrule.WorkspaceFile)
	if err := os.WriteFile(tf, []byte(`{"tools": [{"name": "w", "description": "Count words.", "parameters": {"type": "object"}, "trust": "trusted", "command": ["false"]}]}`), 0o644); err != nil {
		tb.Fatal(err)
	}
	return tf
}

// TestForUnchangedAllocatesOnlyStat: a look-up of an unchanged tools
// file (every snapshot of the language server makes one) allocates no
// more than the stat of the file itself: its freshness key is compared
// without building a string.
func TestForUnchangedAllocatesOnlyStat(t *testing.T) {
	tf := writeTools(t)
	var k Cache
	first := k.For(tf)
	stat := testing.AllocsPerRun(100, func() { _, _ = os.Stat(tf) })
	got := testing.AllocsPerRun(100, func() {
		if k.For(tf) != first {
			t.Fatal("an unchanged tools file's catalog was rebuilt")
		}
	})
	if got > stat {
		t.Fatalf("Cache.For of an unchanged file: %v allocations, os.Stat alone %v", got, stat)
	}
}

// BenchmarkForUnchanged is the look-up of an unchanged tools file; run
// with -benchmem.
func BenchmarkForUnchanged(b *testing.B) {
	tf := writeTools(b)
	var k Cache
	k.For(tf)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		k.For(tf)
	}
}
