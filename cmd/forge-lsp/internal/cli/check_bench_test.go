package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// benchPrompt is a distinct 256-line prompt: an H1 with bindings, then
// sections of prose and Lua that differ by n.
func benchPrompt(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: bench_%d\ndescription: folder benchmark prompt %d\npromptforge: 1\n---\n\n# Bench %d\n\n", n, n, n)
	b.WriteString("```lua\nmodels.default(\"writer\", \"a model suited for careful analysis\")\ntools.bind(\"search\", \"web search capability\")\n```\n\n")
	for sec := 0; strings.Count(b.String(), "\n") < 244; sec++ {
		fmt.Fprintf(&b, "## Step %d\n\n```lua\nlocal count_%d_%d = %d\nfor i = 1, count_%d_%d do\n  store.write(\"notes/%d-%d.md\", tostring(i))\nend\n```\n\n", sec, n, sec, n%7+sec, n, sec, n, sec)
		fmt.Fprintf(&b, "Write paragraph %d of report %d about {{ args }}.\nKeep it short and cite the notes.\n\n", sec, n)
	}
	for strings.Count(b.String(), "\n") < 256 {
		fmt.Fprintf(&b, "Closing line %d.\n", n)
	}
	return b.String()
}

// benchFolder writes n distinct 256-line prompts into a temporary folder.
func benchFolder(b *testing.B, n int) string {
	dir := b.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%04d.md", i)), []byte(benchPrompt(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkCheckFolder checks a folder of 320 distinct 256-line prompts
// with GOMAXPROCS 1 and then 2 in the same run and reports the speed-up
// (serial time / parallel time); on two free cores it is about 1.9.
func BenchmarkCheckFolder(b *testing.B) {
	dir := benchFolder(b, 320)
	check := func() time.Duration {
		start := time.Now()
		if code := Check([]string{"--format", "json", dir}, io.Discard, io.Discard); code != 1 && code != 0 {
			b.Fatalf("check exited %d", code)
		}
		return time.Since(start)
	}
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	var one, two time.Duration
	for b.Loop() {
		runtime.GOMAXPROCS(1)
		one += check()
		runtime.GOMAXPROCS(2)
		two += check()
	}
	b.ReportMetric(float64(one.Milliseconds())/float64(b.N), "ms-procs1/op")
	b.ReportMetric(float64(two.Milliseconds())/float64(b.N), "ms-procs2/op")
	b.ReportMetric(float64(one)/float64(two), "speedup")
}

// TestCheckFolderOrder: the parallel check prints a folder's findings in
// the same order on one core as on several.
func TestCheckFolderOrder(t *testing.T) {
	dir := t.TempDir()
	for i := range 24 {
		text := benchPrompt(i)
		if i%3 == 0 {
			text += "\n```lua\nlocal unused_" + fmt.Sprint(i) + " = 1\n```\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%02d.md", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	out := func(procs int) string {
		runtime.GOMAXPROCS(procs)
		var o, e strings.Builder
		Check([]string{"--format", "json", dir}, &o, &e)
		return o.String() + e.String()
	}
	one := out(1)
	if !strings.Contains(one, "unused_0") || !strings.Contains(one, "24 files checked") {
		t.Fatalf("serial check output:\n%s", one)
	}
	for range 3 {
		if many := out(4); many != one {
			t.Fatalf("output differs on 4 procs:\n%s\nvs\n%s", many, one)
		}
	}
}

// TestCheckFilesStops: when emit stops the check, files not yet started
// are not checked, and checkFiles returns only after the ones in flight.
func TestCheckFilesStops(t *testing.T) {
	files := make([]string, 100)
	for i := range files {
		files[i] = fmt.Sprint(i)
	}
	var started, emitted int32
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	checkFiles(files, 2, func(f string) *fileResult {
		<-mu
		started++
		mu <- struct{}{}
		return &fileResult{path: f}
	}, func(r *fileResult) bool {
		emitted++
		return r.path != "3"
	})
	<-mu
	if emitted != 4 || started > 4+2*2+2 {
		t.Fatalf("emitted %d, started %d: want 4 emitted and at most the window started", emitted, started)
	}
}
