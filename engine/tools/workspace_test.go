package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/toolcat"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestWorkspaceTools(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "bin", "upper.sh"), "#!/bin/sh\ntr a-z A-Z\necho\n", 0o755)
	writeFile(t, filepath.Join(root, "bin", "fail.sh"), "#!/bin/sh\necho 'boom: bad input' >&2\nexit 3\n", 0o755)
	writeFile(t, filepath.Join(root, "bin", "slow.sh"), "#!/bin/sh\nsleep 5\n", 0o755)
	writeFile(t, filepath.Join(root, toolrule.WorkspaceFile), `{"tools":[
	 {"name":"upper","description":"Upper-case the JSON arguments.","parameters":{"type":"object","properties":{"text":{"type":"string"}}},"trust":"trusted","command":["bin/upper.sh"]},
	 {"name":"fetchy","description":"Pretend to fetch.","parameters":{"type":"object"},"trust":"untrusted","command":["sh","-c","cat; echo ' <b>'"]},
	 {"name":"fail","description":"Always fails.","parameters":{"type":"object"},"trust":"trusted","command":["bin/fail.sh"]},
	 {"name":"slow","description":"Too slow.","parameters":{"type":"object"},"trust":"trusted","timeout":"200ms","command":["bin/slow.sh"]}
	]}`, 0o644)
	sub := filepath.Join(root, "prompts", "deep")
	os.MkdirAll(sub, 0o755)
	path, ok := toolcat.Find(sub)
	if !ok || path != filepath.Join(root, toolrule.WorkspaceFile) {
		t.Fatalf("toolcat.Find = %q %v", path, ok)
	}
	ts, err := LoadWorkspaceTools(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
	up, _ := reg.Get(toolrule.ID{Server: "workspace", Name: "upper"})
	out, err := up.Call(context.Background(), `{"text":"hi"}`)
	if err != nil || out.Text() != `{"TEXT":"HI"}` || out.IsUntrusted() {
		t.Fatalf("upper: %q %v", out.Text(), err)
	}
	fe, _ := reg.Get(toolrule.ID{Server: "workspace", Name: "fetchy"})
	out, err = fe.Call(context.Background(), `{}`)
	if err != nil || !out.IsUntrusted() || out.Text() != "{} <b>" {
		t.Fatalf("fetchy: %q %v", out.Text(), err)
	}
	fa, _ := reg.Get(toolrule.ID{Server: "workspace", Name: "fail"})
	_, err = fa.Call(context.Background(), `{}`)
	var te *Error
	if !errors.As(err, &te) || te.Kind != ErrBackend || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "boom: bad input") {
		t.Fatalf("fail: %v", err)
	}
	sl, _ := reg.Get(toolrule.ID{Server: "workspace", Name: "slow"})
	_, err = sl.Call(context.Background(), `{}`)
	if !errors.As(err, &te) || te.Kind != ErrTransport || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Fatalf("slow: %v", err)
	}
	if cat := reg.Catalog(); len(cat) != 4 || cat[0].Params[0] != "text" {
		t.Fatalf("catalog %+v", cat)
	}
}

func TestParseWorkspaceConfigErrors(t *testing.T) {
	base := `"description":"d","parameters":{"type":"object"},"trust":"trusted","command":["x"]`
	cases := []struct{ body, want string }{
		{`{"tools":[{"name":"a b",` + base + `}]}`, "must match"},
		{`{"tools":[{"name":"a",` + base + `},{"name":"a",` + base + `}]}`, "declared twice"},
		{`{"tools":[{"name":"a","description":"","parameters":{},"trust":"trusted","command":["x"]}]}`, "description is required"},
		{`{"tools":[{"name":"a","description":"d","parameters":[],"trust":"trusted","command":["x"]}]}`, "JSON Schema object"},
		{`{"tools":[{"name":"a","description":"d","parameters":{},"command":["x"]}]}`, "trust must be"},
		{`{"tools":[{"name":"a","description":"d","parameters":{},"trust":"trusted","command":[]}]}`, "command must be"},
		{`{"tools":[{"name":"a",` + base + `,"timeout":"forever"}]}`, "timeout"},
		{`{"tools":[{"name":"a",` + base + `,"shell":true}]}`, "unknown field"},
	}
	for _, c := range cases {
		if _, err := toolrule.ParseWorkspaceConfig("forge-tools.json", []byte(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.body, err, c.want)
		}
	}
}
