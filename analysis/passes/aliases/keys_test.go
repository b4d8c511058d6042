package aliases

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
)

// TestKeysCursor checks that reading each section's tools.calls keys
// with a cursor (keys grouped in section order) reports the same as
// grouping them in a map.
func TestKeysCursor(t *testing.T) {
	srcs := map[string][]byte{"realistic": parsetest.Realistic(400)}
	files, _ := filepath.Glob("testdata/*.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs[f] = b
	}
	for name, src := range srcs {
		p := parse.Parse(name, src)
		if !keysGrouped(program.Of(p)) {
			t.Errorf("%s: keys not grouped in section order", name)
		}
		cursor := runAliases(t, p)
		groupedKeys = func(*program.Program) bool { return false }
		grouped := runAliases(t, p)
		groupedKeys = keysGrouped
		if !reflect.DeepEqual(cursor, grouped) {
			t.Errorf("%s: cursor and map disagree:\n%v\n%v", name, cursor, grouped)
		}
	}
}

func runAliases(t *testing.T, p *parse.Prompt) []string {
	ds, err := analysis.Run(context.Background(), p, []*analysis.Analyzer{Analyzer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%+v", d))
	}
	return out
}
