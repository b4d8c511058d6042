package docs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/render"
)

// TestReviewExamples keeps review.md's example output equal to what
// `forge-lsp render` prints for examples/topics.md with the page's gateway
// file, and its diff against a version with other wording.
func TestReviewExamples(t *testing.T) {
	doc := read(t, "review.md")
	i, j := strings.Index(doc, "<!-- review-gateway:begin -->"), strings.Index(doc, "<!-- review-gateway:end -->")
	if i < 0 || j < i {
		t.Fatal("review.md: the gateway file markers are missing")
	}
	toml := doc[i:j]
	toml = toml[strings.Index(toml, "```toml\n")+len("```toml\n"):]
	toml = toml[:strings.Index(toml, "```")]
	gw := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(gw, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../examples/topics.md")
	if err != nil {
		t.Fatal(err)
	}
	const path = "examples/topics.md"
	rend := func(src []byte) *render.Result {
		res, err := render.Render(context.Background(), render.Options{Path: path, Source: src, GatewayFile: gw})
		if err != nil {
			t.Fatal(err)
		}
		if res.Synthetic || res.Cost == nil || len(res.Rounds) == 0 {
			t.Fatalf("the example shows no catalog, cost or round: %+v", res)
		}
		return res
	}
	now := rend(src)
	before := strings.Replace(string(src), "Write two plain sentences about", "Write one short, friendly paragraph about", 1)
	if before == string(src) {
		t.Fatal("examples/topics.md changed: update the wording this test replaces")
	}
	diff := render.DiffMarkdown([]*render.FileDiff{render.Diff(path, "", rend([]byte(before)), now)})
	want := replaceBlock(t, "review.md", doc, "<!-- review-render:begin -->", "<!-- review-render:end -->", "```text\n"+render.Text(now)+"```\n")
	want = replaceBlock(t, "review.md", want, "<!-- review-diff:begin -->", "<!-- review-diff:end -->", "~~~~markdown\n"+diff+"~~~~\n")
	checkGenerated(t, "review.md", doc, want)
}
