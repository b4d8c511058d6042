package checker_test

import (
	"os"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestCRLFSpans checks every analyzer testdata file twice, with LF and
// with CRLF line breaks: the findings, and the text their spans cover,
// must be the same. (The parser's chunk and prose texts lose their CRs, so
// any offset computed by plain addition would drift by one per line.)
func TestCRLFSpans(t *testing.T) {
	for _, f := range analysistest.Corpus(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lf := string(b)
		crlf := strings.ReplaceAll(lf, "\n", "\r\n")
		pl := parse.Parse(f, []byte(lf))
		pc := parse.Parse(f, []byte(crlf))
		dl := checker.Check(pl, nil)
		dc := checker.Check(pc, nil)
		if len(dl) != len(dc) {
			t.Errorf("%s: %d findings with LF, %d with CRLF", f, len(dl), len(dc))
			continue
		}
		for i := range dl {
			tl := pl.File.Text(dl[i].Span)
			tc := strings.ReplaceAll(pc.File.Text(dc[i].Span), "\r", "")
			if dl[i].Code != dc[i].Code || tl != tc {
				t.Errorf("%s: finding %d: LF %s %q, CRLF %s %q", f, i, dl[i].Code, tl, dc[i].Code, tc)
			}
			ll, lc := pl.File.Position(dl[i].Span.Start)
			cl, cc := pc.File.Position(dc[i].Span.Start)
			if ll != cl || lc != cc {
				t.Errorf("%s: finding %d (%s) at %d:%d with LF, %d:%d with CRLF", f, i, dl[i].Code, ll, lc, cl, cc)
			}
		}
	}
}
