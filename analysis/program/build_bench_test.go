package program_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

var editSeq int

// BenchmarkBuildEdit10k measures program.Build of a 10,000-line prompt
// right after an edit inside one ```lua chunk: the per-chunk models are
// memoised from the previous build and one chunk changed. The parse is
// outside the timer.
func BenchmarkBuildEdit10k(b *testing.B) {
	src := parsetest.Realistic(10000)
	at := bytes.Index(src, []byte("total = total + k"))
	if at < 0 {
		b.Fatal("no edit point")
	}
	at += len("total = total + ")
	program.Build(parse.Parse("big.md", src))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// A new number each time (also across -count runs), so the
		// edited chunk is really new.
		editSeq++
		v := fmt.Appendf(nil, "k + %d", editSeq)
		edited := append(append(append([]byte{}, src[:at]...), v...), src[at+1:]...)
		p := parse.Parse("big.md", edited)
		b.StartTimer()
		program.Build(p)
	}
}
