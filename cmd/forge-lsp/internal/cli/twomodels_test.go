package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// A typical gateway file of a newcomer with a local server: a small fast
// model and a large reasoning model, described as such files describe
// them.
var typicalModels = []struct{ name, description string }{
	{"llama3.2:3b", "Small fast model for quick answers, chat and simple tasks"},
	{"qwen3:32b", "Large reasoning model for careful analysis, coding and long documents"},
}

func typicalGatewayFile(t *testing.T, base string, models ...int) string {
	t.Helper()
	text := "[[endpoint]]\nid = \"local\"\nprotocol = \"openai\"\nbase_url = \"" + base + "\"\napi_key = \"k\"\n"
	for _, i := range models {
		m := typicalModels[i]
		text += "\n[[model]]\nname = \"" + m.name + "\"\ndescription = \"" + m.description + "\"\ncontext = 32768\nupstream = \"" + m.name + "\"\nendpoints = [\"local\"]\n"
	}
	file := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestExamplesBindWithTwoModels: every shipped example that binds a model
// binds it against each model alone and against both together: adding a
// second model to a gateway file does not break a prompt that bound with
// one, because a word every description shares ("model") does not decide
// (docs/language.md#capability-resolution).
func TestExamplesBindWithTwoModels(t *testing.T) {
	srv := gatewaytest.New(t, "k")
	srv.Script = func(*gateway.Request) gatewaytest.Reply { return gatewaytest.Text("ok") }
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "*.md"))
	binds := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "models.") {
			continue
		}
		binds++
		for _, set := range [][]int{{0}, {1}, {0, 1}} {
			gw := typicalGatewayFile(t, srv.BaseURL(), set...)
			names := []string{}
			for _, k := range set {
				names = append(names, typicalModels[k].name)
			}
			t.Run(filepath.Base(f)+"/"+strings.Join(names, "+"), func(t *testing.T) {
				_, _, errs := runCLI(t, "--gateway-config", gw, f, "the input")
				if strings.Contains(errs, "Binding") || strings.Contains(errs, "no model matches") {
					t.Errorf("with models %v: %s", set, errs)
				}
			})
		}
	}
	if binds == 0 {
		t.Fatal("no example binds a model")
	}
}
