package format

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// stylua finds the StyLua binary (npm @johnnymorganz/stylua-bin, which
// the CI scripts install), or skips the test.
func stylua(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("STYLUA"); p != "" {
		return p
	}
	p, err := exec.LookPath("stylua")
	if err != nil {
		t.Skip("stylua is not installed (npm install -g @johnnymorganz/stylua-bin); the CI scripts install it")
	}
	return p
}

// fence is one Lua chunk to compare.
type fence struct {
	name, src string
}

func corpusFences(t testing.TB) []fence {
	var fs []fence
	for _, p := range corpus(t) {
		fs = append(fs, promptFences(p.name, p.src)...)
	}
	return fs
}

func promptFences(name string, src []byte) []fence {
	pr := parse.Parse(name, src)
	if len(pr.Errors) > 0 {
		return nil
	}
	var fs []fence
	add := func(c *parse.Chunk) {
		if c != nil && c.OK() && strings.TrimSpace(c.Source) != "" {
			fs = append(fs, fence{fmt.Sprintf("%s:%d", name, c.FirstLine), c.Source})
		}
	}
	add(pr.Shared)
	blocks := append([]*parse.Block{}, pr.H1Blocks...)
	var walk func([]*parse.Section)
	walk = func(ss []*parse.Section) {
		for _, s := range ss {
			blocks = append(blocks, s.Blocks...)
			walk(s.Children)
		}
	}
	walk(pr.Sections)
	for _, b := range blocks {
		if b.Kind == parse.LuaBlock {
			add(b.Chunk)
		}
	}
	return fs
}

// styluaAll formats every source with StyLua's defaults in one run.
func styluaAll(t testing.TB, bin string, srcs []string) []string {
	dir := t.TempDir()
	// An empty configuration file: StyLua's defaults, whatever the
	// machine's folders hold.
	if err := os.WriteFile(filepath.Join(dir, "stylua.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, s := range srcs {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.lua", i)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "--config-path", filepath.Join(dir, "stylua.toml"), "--num-threads", "1", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("stylua: %v: %s", err, out) // a file StyLua rejects stays unformatted
	}
	res := make([]string, len(srcs))
	for i := range srcs {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%05d.lua", i)))
		if err != nil {
			t.Fatal(err)
		}
		res[i] = strings.TrimRight(string(b), "\n")
	}
	return res
}

// TestStyLuaAgreement measures the share of Lua fences whose formatted
// text equals StyLua's default output, over the corpus and the generated
// 10,000-line prompt; docs/formatting.md names every class of difference.
func TestStyLuaAgreement(t *testing.T) {
	bin := stylua(t)
	fs := corpusFences(t)
	nCorpus := len(fs)
	gen, _ := genPrompt(10000)
	fs = append(fs, promptFences("generated", []byte(gen))...)
	srcs := make([]string, len(fs))
	for i, f := range fs {
		srcs[i] = f.src
	}
	want := styluaAll(t, bin, srcs)
	same, sameCorpus := 0, 0
	var diffs []string
	for i, f := range fs {
		got, err := Lua(f.src, Default().Lua)
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if got == want[i] {
			same++
			if i < nCorpus {
				sameCorpus++
			}
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s:\n--- forge-lsp\n%s\n--- stylua\n%s", f.name, got, want[i]))
	}
	sort.Strings(diffs)
	if testing.Verbose() {
		for _, d := range diffs {
			t.Log(d)
		}
	}
	share := float64(same) / float64(len(fs))
	t.Logf("equal to StyLua: %d of %d fences (%.1f%%); corpus %d of %d, generated prompt %d of %d",
		same, len(fs), 100*share, sameCorpus, nCorpus, same-sameCorpus, len(fs)-nCorpus)
	if share < 0.9 {
		t.Errorf("only %.1f%% of the fences equal StyLua's output, want at least 90%%", 100*share)
	}
}

// BenchmarkFormatVsStyLua formats the generated 10,000-line prompt and
// reports the time per format and its ratio to StyLua formatting the
// prompt's Lua alone (a `stylua -` process, as an editor or a pre-commit
// hook runs it), measured in the same run. The target is a ratio of at
// most 1.
func BenchmarkFormatVsStyLua(b *testing.B) {
	bin := stylua(b)
	prompt, lua := genPrompt(10000)
	dir := b.TempDir()
	cfg := filepath.Join(dir, "stylua.toml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	const baseRuns = 5
	var base time.Duration
	for i := 0; i < baseRuns; i++ {
		cmd := exec.Command(bin, "--config-path", cfg, "-")
		cmd.Stdin = strings.NewReader(lua)
		t0 := time.Now()
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("stylua: %v", err)
		}
		base += time.Since(t0) / baseRuns
	}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := Source("generated.md", []byte(prompt), Default()); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.ReportMetric(float64(per)/1e6, "fmt-ms")
	b.ReportMetric(float64(base)/1e6, "stylua-ms")
	b.ReportMetric(float64(per)/float64(base), "fmt/stylua")
}
