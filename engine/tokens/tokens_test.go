package tokens

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go's cl100k_base over the same embedded assets.
func reference(t testing.TB) *tiktoken.Tiktoken {
	t.Helper()
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(Encoding)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

var samples = []string{
	"",
	"Hello world",
	"hello, world!\n\nHow's it going? I'm fine; they'll see. WE'RE HERE'S",
	"Summarise {{ var.step_1 }} for {{ args }} using search and fetch.\nKeep it short.",
	"   leading spaces and trailing   ",
	"tabs\tand\r\nCRLF line\r\n\r\nbreaks\n\n\n",
	"numbers 1 12 123 1234 12345 3.14159 1e10",
	"日本語のテキストと English mixed 😀😀 emoji, ümlaut façade naïve",
	"punctuation!!! ??? ... --- *** ``` ```lua\n```\n",
	"  \n  \n x",
	"a  b   c    d",
	"'s 'S 'tis 'Twas don't DON'T 've 'LL 'd 're",
	"## Heading\n\n- item one\n- item two\n\n1. first\n2. second\n",
	"\u00a0non-breaking\u2003em space\u3000ideographic",
	"<|endoftext|> special tokens are ordinary text here",
	"x" + strings.Repeat("=", 300) + "y",
}

func TestCountMatchesTiktoken(t *testing.T) {
	enc := reference(t)
	texts := append([]string(nil), samples...)
	// The repository's own prose: every Markdown file under docs/.
	files, _ := filepath.Glob("../../docs/*.md")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			texts = append(texts, string(b))
		}
	}
	for _, s := range texts {
		want := len(enc.Encode(s, nil, nil))
		if got := Count(s); got != want {
			t.Errorf("Count(%.60q) = %d, tiktoken-go says %d", s, got, want)
		}
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	enc := reference(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8Valid(s) {
			return
		}
		if got, want := Count(s), len(enc.Encode(s, nil, nil)); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken-go says %d", s, got, want)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// proseLines is n lines of prompt-like prose.
func proseLines(n int) string {
	words := strings.Fields("Summarise the findings for the reader using search and fetch keep it short factual and cite every source you used in the running total of step")
	var b strings.Builder
	for i := 0; i < n; i++ {
		for k := 0; k < 10; k++ {
			b.WriteString(words[(i*i*31+k*17+i/3)%len(words)])
			b.WriteByte(' ')
		}
		b.WriteString("{{ var.total }}.\n")
		if i%5 == 4 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// BenchmarkCount counts 10,000 lines of prose and reports the time per
// count and its ratio to tiktoken-go encoding the same text, measured in
// the same run.
func BenchmarkCount(b *testing.B) {
	text := proseLines(10000)
	enc := reference(b)
	if err := Ready(); err != nil {
		b.Fatal(err)
	}
	const baseRuns = 3
	var base float64
	for i := 0; i < baseRuns; i++ {
		t0 := nowNS()
		_ = enc.Encode(text, nil, nil)
		base += float64(nowNS()-t0) / baseRuns
	}
	b.ResetTimer()
	t0 := nowNS()
	for i := 0; i < b.N; i++ {
		Count(text)
	}
	per := float64(nowNS()-t0) / float64(b.N)
	b.ReportMetric(per/1e6, "count-ms")
	b.ReportMetric(base/1e6, "tiktoken-go-ms")
	b.ReportMetric(per/base, "count/tiktoken-go")
}
