package run

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runChild runs the test named test in a fresh process of this test
// binary with env added, and returns the n space-separated fields of the
// line "RESULT ..." it printed (the last field takes the rest of the
// line) and its whole output.
func runChild(t *testing.T, test string, env []string, n int) ([]string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, text)
	}
	var f []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if k, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "RESULT "); ok {
			if f = strings.SplitN(k, " ", n); len(f) != n {
				t.Fatalf("bad child result %q", k)
			}
		}
	}
	if f == nil {
		t.Fatalf("child printed no result:\n%s", text)
	}
	return f, text
}

// memoryFuse makes a child print result(peak) and exit once its peak
// resident set passes 900 MiB, so that a broken guard cannot take the
// shared machine down.
func memoryFuse(result func(peak int64) string) {
	go func() {
		for {
			time.Sleep(5 * time.Millisecond)
			if peak := rss("VmHWM"); peak > 900<<20 {
				fmt.Println(result(peak))
				os.Exit(0)
			}
		}
	}()
}

// rss reads a size field of /proc/self/status: VmRSS (the resident set)
// or VmHWM (its peak).
func rss(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n << 10
		}
	}
	return -1
}
