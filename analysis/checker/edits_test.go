package checker_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// realisticEdits starts a test of edits to the realistic prompt of the
// given number of lines with an empty parse cache (emptied again when the
// test ends), and returns the text of its i-th edit: a new number in one
// chunk's `total = total + k`, so each edit's chunk is new to the cache
// and every other chunk is the cached one.
func realisticEdits(tb testing.TB, lines int) func(i int) []byte {
	src := parsetest.Realistic(lines)
	at := bytes.Index(src, []byte("total = total + k"))
	if at < 0 {
		tb.Fatal("no edit point")
	}
	at += len("total = total + ")
	parse.ResetCache()
	tb.Cleanup(parse.ResetCache)
	return func(i int) []byte {
		v := fmt.Appendf(nil, "k + %d", i)
		return append(append(append([]byte{}, src[:at]...), v...), src[at+1:]...)
	}
}
