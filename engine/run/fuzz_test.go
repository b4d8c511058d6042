package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"golang.org/x/tools/txtar"
)

// FuzzRun runs arbitrary prompt files with small limits: whatever the
// input, a run must end with a result or a typed error, never a panic
// (which recoverInternal would report as "internal error").
//
//	go test -run '^$' -fuzz FuzzRun -fuzztime 20s ./engine/run/
func FuzzRun(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/run/*.txtar")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, af := range txtar.Parse(data).Files {
			if af.Name == "prompt.md" {
				f.Add(af.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		p := parse.Parse("fuzz.md", content)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cfg := Config{Limits: Limits{Instructions: 200000, MaxSectionEntries: 50, FanoutConcurrency: 2}}
		_, err := Run(ctx, p, cfg)
		if re := AsRunError(err); re != nil && re.Kind == KindInternal && strings.HasPrefix(re.Msg, "internal error:") {
			t.Fatalf("panic: %v", err)
		}
	})
}
