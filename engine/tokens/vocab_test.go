package tokens

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	loader "github.com/pkoukk/tiktoken-go-loader"
)

// TestVocabMatchesLoader checks the pointer-free table against the map
// the loader builds from the same file: the same entries, each with the
// same rank, and no others.
func TestVocabMatchesLoader(t *testing.T) {
	want, err := loader.NewOfflineLoader().LoadTiktokenBpe(Encoding + ".tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	v, err := loadVocab(Encoding + ".tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	if v.len() != len(want) {
		t.Errorf("vocab has %d tokens, the loader's map %d", v.len(), len(want))
	}
	nonTokens := []string{
		"",
		"\xff\xfe\xfd\xfc",
		strings.Repeat("x", 300),
		"hello world this is not one token",
		"<|endoftext|>",
	}
	for tok, r := range want {
		if got, ok := v.rank(tok); !ok || got != r {
			t.Fatalf("rank(%q) = %d, %v; the loader says %d", tok, got, ok, r)
		}
		// A token with one byte more or less is often not a token.
		nonTokens = append(nonTokens, tok+"\x00", "\xff"+tok, tok[1:])
	}
	absent := 0
	for _, s := range nonTokens {
		if _, isToken := want[s]; isToken {
			continue
		}
		absent++
		if got, ok := v.rank(s); ok {
			t.Fatalf("rank(%q) = %d, true; the loader has no such token", s, got)
		}
	}
	if absent < len(want) {
		t.Errorf("only %d non-tokens checked", absent)
	}
}

func TestVocabMissingFile(t *testing.T) {
	if _, err := loadVocab("no_such_encoding.tiktoken"); err == nil {
		t.Error("loadVocab of a missing file: no error")
	}
}

// TestVocabPointerFree checks that the table adds a handful of heap
// objects, not one per token: the garbage collector marks each object
// of a map of strings, on every cycle, for as long as the process runs.
func TestVocabPointerFree(t *testing.T) {
	objects := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapObjects
	}
	before := objects()
	v, err := loadVocab(Encoding + ".tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	after := objects()
	runtime.KeepAlive(v)
	// The loader's map of the same vocabulary is some 80,000 objects.
	if after > before && after-before > 1000 {
		t.Errorf("the vocabulary of %d tokens added %d heap objects", v.len(), after-before)
	}
}

// BenchmarkMerge merges every distinct pre-tokenizer piece of the
// repository's docs/*.md with the ranks, without the memo Count keeps:
// the cost of the rank lookups that counting text not seen before pays.
func BenchmarkMerge(b *testing.B) {
	files, _ := filepath.Glob("../../docs/*.md")
	seen := map[string]bool{}
	var pieces []string
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		s := string(text)
		for i := 0; i < len(s); {
			j := nextPiece(s, i)
			if p := s[i:j]; len(p) > 1 && !seen[p] {
				seen[p] = true
				pieces = append(pieces, p)
			}
			i = j
		}
	}
	rk, err := load()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(pieces)), "pieces")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range pieces {
			bpeCount(rk, p)
		}
	}
}
