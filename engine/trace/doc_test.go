package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
)

// docPrompt emits every event kind; the comments are file lines.
const docPrompt = "---\nname: t\ndescription: a test prompt\npromptforge: 1\n---\n\n" +
	"# T\n\n```lua\nmodels.default(\"writer\", \"A model suited for careful analysis, coding, and general assistance\")\n```\n\n" + // 7, 9-11
	"## Main\n\n" + // 13
	"```lua\n" + // 15
	"log(\"go\")\n" + // 16
	"tools.add_local(\"save\", \"save text\", {text = \"string\"}, function(a)\n" + // 17
	"  store.write(\"n.md\", a.text)\n" + // 18
	"  return \"ok\"\n" +
	"end)\n" +
	"var.seen = {\"a\"}\n```\n\n" + // 21
	"Say hi.\n" // 24

// docEvents reads the event table of docs/debugging.md: the fields each
// event kind lists.
func docEvents(t *testing.T) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../../docs/debugging.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "| `ev` | when | fields |")
	if i < 0 {
		t.Fatal("docs/debugging.md has no event table")
	}
	paren := regexp.MustCompile(`\([^)]*\)`)
	tick := regexp.MustCompile("`([A-Za-z.]+)`")
	out := map[string]map[string]bool{}
	for _, row := range strings.Split(text[i:], "\n")[2:] {
		if !strings.HasPrefix(row, "|") {
			break
		}
		cells := strings.Split(row, "|")
		ev := strings.Trim(strings.TrimSpace(cells[1]), "`")
		fields := map[string]bool{}
		for _, m := range tick.FindAllStringSubmatch(paren.ReplaceAllString(cells[3], ""), -1) {
			fields[m[1]] = true
		}
		if strings.Contains(cells[3], "as enter") {
			for f := range out["section.enter"] {
				fields[f] = true
			}
		}
		out[ev] = fields
	}
	return out
}

// TestTraceMatchesDocs: every event kind docs/debugging.md lists is
// emitted and every emitted one is listed, with no field the table does
// not name; every event but the first and last carries sectionId (0 for
// the H1 pass); a store write by a tool handler has the handler's line.
func TestTraceMatchesDocs(t *testing.T) {
	doc := docEvents(t)
	srv := gatewaytest.New(t, "k")
	srv.Enqueue(gatewaytest.Calls("save", `{"text":"x"}`), gatewaytest.Text("done"))
	var tb bytes.Buffer
	w := NewWriter(&tb, "p.md", "Ann")
	res, err := runPrompt(docPrompt, "Ann", w, envOf(srv))
	w.End(res, err)
	if err != nil || res != "done" {
		t.Fatalf("run: %q %v", res, err)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(&tb)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		ev, _ := m["ev"].(string)
		seen[ev] = true
		fields, ok := doc[ev]
		if !ok {
			t.Errorf("event %q is emitted but not in docs/debugging.md", ev)
			continue
		}
		edge := ev == "run.start" || ev == "run.end"
		for k := range m {
			if k == "ev" || k == "ms" || !edge && (k == "sectionId" || k == "section") || fields[k] {
				continue
			}
			t.Errorf("%s has field %q, which docs/debugging.md does not list: %s", ev, k, sc.Text())
		}
		if _, has := m["sectionId"]; has == edge {
			t.Errorf("%s: sectionId present %v, want %v: %s", ev, has, !edge, sc.Text())
		}
		if ev == "section.enter" && m["line"] == float64(7) && m["sectionId"] != float64(0) {
			t.Errorf("the H1 pass has sectionId %v, want 0", m["sectionId"])
		}
		if ev == "store.write" && m["line"] != float64(18) {
			t.Errorf("a store write by a tool handler: %s, want line 18", sc.Text())
		}
	}
	for ev := range doc {
		if !seen[ev] {
			t.Errorf("docs/debugging.md lists %q, which the run did not emit", ev)
		}
	}
}
