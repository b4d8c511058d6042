package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/cli"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
)

// folderPrompt is the n-th of a folder of distinct prompts of exactly
// lines lines, shaped like the shipped examples: a model and a bound tool
// in the H1, then sections mixing local tools, loops, store use, helper
// functions, branching on the reply, prose with placeholders and lists.
// Names, numbers, texts and the order of section kinds vary with n, so
// no two files share a chunk.
func folderPrompt(n, lines int) string {
	r := rand.New(rand.NewPCG(uint64(n), 34))
	words := []string{"market", "latency", "budget", "customer", "release", "risk", "summary", "source", "draft", "review", "metric", "incident"}
	word := func() string { return words[r.IntN(len(words))] }
	out := []string{"---", fmt.Sprintf("name: folder_%d", n), fmt.Sprintf("description: Study the %s of item %d and report", word(), n), "promptforge: 1", "---", "",
		fmt.Sprintf("# Folder %d", n), "", "```lua",
		fmt.Sprintf(`models.default("analyst%d", "a model suited for %s analysis")`, n%5, word()),
		fmt.Sprintf(`tools.bind("search", "web search capability", "Search the web for %s %d")`, word(), n), "```", ""}
	for s := 1; len(out) < lines; s++ {
		id := fmt.Sprintf("%d_%d", n, s)
		out = append(out, fmt.Sprintf("## Step %d %s", s, word()), "")
		switch r.IntN(5) {
		case 0: // a local tool
			out = append(out, "```lua",
				fmt.Sprintf(`tools.add_local("note_%s", "Record a %s finding", {`, id, word()),
				`	key = { "string", "Short key" },`,
				`	text = { "string", "One or two sentences" },`,
				"}, function(a)",
				fmt.Sprintf(`	store.write("notes/%s/" .. a.key .. ".md", a.text)`, id),
				fmt.Sprintf(`	return "saved %s " .. a.key`, id),
				"end)", "```", "")
		case 1: // a loop feeding var
			out = append(out, "```lua", "local total = 0",
				fmt.Sprintf("for k = 1, %d do", 2+r.IntN(20)),
				fmt.Sprintf("	total = total + k * %d", 1+r.IntN(97)),
				"end", fmt.Sprintf("var.total_%s = total", id), "```", "",
				fmt.Sprintf("Use the running total {{ var.total_%s }} when you weigh the %s.", id, word()), "")
		case 2: // a helper and a table
			out = append(out, "```lua",
				fmt.Sprintf("local function label_%s(x)", id),
				fmt.Sprintf(`	return "%s-" .. tostring(x)`, word()),
				"end",
				fmt.Sprintf("local items = { %q, %q, %q }", word(), word(), word()),
				"for i, v in ipairs(items) do",
				fmt.Sprintf(`	store.append("lists/%s.md", label_%s(i) .. " " .. v .. "\n")`, id, id),
				"end", "```", "")
		case 3: // branching on the reply
			out = append(out, "```lua",
				fmt.Sprintf(`if reply and reply:find("%s") then`, strings.ToUpper(word())),
				fmt.Sprintf(`	return "stopped at %s"`, id),
				"end",
				fmt.Sprintf(`store.write("out/%s.txt", reply or "")`, id), "```", "")
		default: // prose and a list
			out = append(out, fmt.Sprintf("Summarise the %s for {{ args }} in %d sentences.", word(), 2+r.IntN(4)), "",
				fmt.Sprintf("- cite the %s", word()),
				fmt.Sprintf("- keep the %s short", word()),
				fmt.Sprintf("- flag any %s risk", word()), "")
		}
		out = append(out, fmt.Sprintf("Write part %d of report %d about the %s of {{ args }}.", s, n, word()), "")
	}
	for len(out) > lines && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	// Cut to size at a line outside a fence.
	for len(out) > lines {
		i := len(out) - 1
		for i > 0 && !strings.HasPrefix(out[i], "## ") {
			i--
		}
		out = out[:i]
	}
	for len(out) < lines {
		out = append(out, fmt.Sprintf("Closing note %d.", len(out)))
	}
	return strings.Join(out, "\n") + "\n"
}

// writeFolder writes n distinct 256-line prompts into a new folder.
func writeFolder(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%05d.md", i)), []byte(folderPrompt(i, 256)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// childUse runs the command with extra environment and returns its peak
// resident memory (MiB), CPU time (user plus system) and wall time; an
// exit status above 1 fails the benchmark.
func childUse(b *testing.B, env []string, name string, args ...string) (rssMiB float64, cpu, wall time.Duration) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall = time.Since(t0)
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() <= 1) {
		b.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return float64(ru.Maxrss) / 1024, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall
}

// BenchmarkFolderCheck execs `forge-lsp check` (built as a release) on
// folders of distinct 256-line prompts, 200 and 2,000 under -long (20 and
// 200 otherwise), and reports each one's peak RSS and CPU time (user plus
// system) and the ratio of the large folder's peak RSS to the small
// one's: memory must follow the files in flight, not the number of files
// (budget: 150 MB and 1.3x at 2,000). It also checks the large folder on
// one core (GOMAXPROCS=1) and reports the wall-time speed-up of the
// default (all cores).
func BenchmarkFolderCheck(b *testing.B) {
	small, large := 20, 200
	if testflag.Long() {
		small, large = 200, 2000
	}
	bin := productBinary(b, b.TempDir())
	ds, dl := writeFolder(b, small), writeFolder(b, large)
	for b.Loop() {
		rs, cs, _ := childUse(b, nil, bin, "check", ds)
		rl, cl, wl := childUse(b, nil, bin, "check", dl)
		_, _, w1 := childUse(b, []string{"GOMAXPROCS=1"}, bin, "check", dl)
		b.ReportMetric(rs, "rss-small-MiB")
		b.ReportMetric(rl, "rss-large-MiB")
		b.ReportMetric(rl/rs, "rss-large/small")
		b.ReportMetric(float64(cs.Milliseconds()), "cpu-small-ms")
		b.ReportMetric(float64(cl.Milliseconds()), "cpu-large-ms")
		b.ReportMetric(float64(cl)/float64(cs)*float64(small)/float64(large), "cpu-per-file-large/small")
		b.ReportMetric(float64(w1)/float64(wl), "speedup")
	}
}

// TestFolderPromptsClean: the generated folder prompts are distinct,
// have the asked number of lines and check without errors, so the folder
// benchmark measures checking rather than error reporting.
func TestFolderPromptsClean(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for i := range 12 {
		p := folderPrompt(i, 256)
		if got := strings.Count(p, "\n"); got != 256 {
			t.Fatalf("prompt %d has %d lines", i, got)
		}
		if seen[p] {
			t.Fatalf("prompt %d repeats another", i)
		}
		seen[p] = true
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.md", i)), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs strings.Builder
	if code := cli.Check([]string{dir}, &out, &errs); code != 0 {
		t.Fatalf("check exited %d:\n%s%s", code, out.String(), errs.String())
	}
}
