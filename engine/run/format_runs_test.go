package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/format"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"golang.org/x/tools/txtar"
)

// TestFormattedRunsAlike runs every testdata/run case twice, as written
// and as `forge-lsp fmt` formats it (engine/format, docs/formatting.md):
// the result or the error, the log and the store are the same, line
// numbers aside.
func TestFormattedRunsAlike(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/run/*.txtar")
	compared := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ar := txtar.Parse(data)
		var src []byte
		for _, af := range ar.Files {
			if af.Name == "prompt.md" {
				src = af.Data
			}
		}
		out, err := format.Source("prompt.md", src, format.Default())
		if err != nil {
			continue // parse errors: the prompt does not run either
		}
		compared++
		if a, b := runOutcome(t, ar, src), runOutcome(t, ar, out); a != b {
			t.Errorf("%s: the formatted prompt runs differently:\n%s\n---\n%s", filepath.Base(f), a, b)
		}
	}
	if compared < 50 {
		t.Errorf("only %d cases compared", compared)
	}
	t.Logf("%d of %d cases run alike formatted", compared, len(files))
}

var lineNumbers = regexp.MustCompile(`(line |:)\d+`)

// runOutcome runs one case's prompt (src) with the case's input, section
// and store, and describes what happened without line numbers.
func runOutcome(t *testing.T, ar *txtar.Archive, src []byte) string {
	files := map[string]string{}
	st := store.New()
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
		if p, ok := strings.CutPrefix(f.Name, "store/"); ok {
			if err := st.Write(p, string(f.Data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := parse.Parse("prompt.md", src)
	obs := &logObs{}
	cfg := Config{Input: strings.TrimSuffix(files["input"], "\n"), Store: st, Observer: obs, Execution: "exec-1",
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got string
	var err error
	if sec, ok := files["section"]; ok {
		s, ferr := parse.FindSection(p, strings.TrimSpace(sec))
		if ferr != nil {
			return "section: " + ferr.Error()
		}
		got, err = RunSection(ctx, p, s, cfg)
	} else {
		got, err = Run(ctx, p, cfg)
	}
	var b strings.Builder
	if err != nil {
		re := AsRunError(err)
		fmt.Fprintf(&b, "error %s: %s\n", re.Kind, re.Msg)
	} else {
		fmt.Fprintf(&b, "result %q\n", got)
	}
	fmt.Fprintf(&b, "log %q\n", obs.lines)
	// The store files the case pins (want-store/): concurrent arms may
	// leave others depending on timing.
	for _, f := range ar.Files {
		if p, ok := strings.CutPrefix(f.Name, "want-store/"); ok {
			v, rerr := st.Read(p)
			fmt.Fprintf(&b, "store %s %q %v\n", p, v, rerr)
		}
	}
	return lineNumbers.ReplaceAllString(b.String(), "${1}N")
}
