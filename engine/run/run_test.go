package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/store"
	"golang.org/x/tools/txtar"
)

// TestPrompts runs every testdata/run/*.txtar case. Sections of a case:
//
//	prompt.md        the prompt
//	input            the run input (optional, trailing newline trimmed)
//	section          run only this section (RunSection), optional
//	want             the expected result (trailing newline trimmed)
//	error            the expected error: "<Kind>: <substring>" and,
//	                 optionally, a second line "line <n>"
//	store/<path>     a store file before the run
//	want-store/<p>   a store file expected after the run
//	log              expected log lines, one per line
func TestPrompts(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/run/*.txtar")
	if len(files) == 0 {
		t.Fatal("no test prompts")
	}
	for _, f := range files {
		f := f
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runCase(t, f)
		})
	}
}

type logObs struct {
	nopObserver
	lines []string
}

func (o *logObs) Log(ev LogEvent) { o.lines = append(o.lines, ev.Message) }

func runCase(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar := txtar.Parse(data)
	files := map[string]string{}
	st := store.New()
	var wantStore []string
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
		if p, ok := strings.CutPrefix(f.Name, "store/"); ok {
			if err := st.Write(p, string(f.Data)); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasPrefix(f.Name, "want-store/") {
			wantStore = append(wantStore, f.Name)
		}
	}
	src, ok := files["prompt.md"]
	if !ok {
		t.Fatal("case has no prompt.md")
	}
	p := parse.Parse("prompt.md", []byte(src))
	obs := &logObs{}
	cfg := Config{Input: strings.TrimSuffix(files["input"], "\n"), Store: st, Observer: obs, Execution: "exec-1",
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	// No gateway from the environment: cases must not depend on it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got string
	if sec, ok := files["section"]; ok {
		s, ferr := parse.FindSection(p, strings.TrimSpace(sec))
		if ferr != nil {
			t.Fatal(ferr)
		}
		got, err = RunSection(ctx, p, s, cfg)
	} else {
		got, err = Run(ctx, p, cfg)
	}
	if want, ok := files["error"]; ok {
		if err == nil {
			t.Fatalf("want error %q, got result %q", want, got)
		}
		re := AsRunError(err)
		lines := strings.Split(strings.TrimSpace(want), "\n")
		kind, sub, _ := strings.Cut(lines[0], ": ")
		if re.Kind.String() != kind || !strings.Contains(re.Msg, sub) {
			t.Errorf("error = %s: %q (line %d)\nwant    %s: ...%q...", re.Kind, re.Msg, re.Line, kind, sub)
		}
		if len(lines) > 1 {
			if want := strings.TrimSpace(lines[1]); want != fmt.Sprintf("line %d", re.Line) {
				t.Errorf("error line = %d, want %s (%q)", re.Line, want, re.Msg)
			}
		}
		// "located: ..." is the whole line a CLI prints for the prompt
		// p.md: the position given once.
		for _, l := range lines[min(len(lines), 2):] {
			if want, ok := strings.CutPrefix(strings.TrimSpace(l), "located: "); ok {
				if got := re.Located("p.md"); got != want {
					t.Errorf("located = %q\nwant      %q", got, want)
				}
			}
		}
	} else if err != nil {
		re := AsRunError(err)
		t.Fatalf("unexpected error %s: %v (line %d)", re.Kind, err, re.Line)
	} else if want := strings.TrimSuffix(files["want"], "\n"); got != want {
		t.Errorf("result = %q\nwant     %q", got, want)
	}
	for _, name := range wantStore {
		p := strings.TrimPrefix(name, "want-store/")
		gotS, err := st.Read(p)
		if err != nil {
			t.Errorf("store %s: %v", p, err)
			continue
		}
		if gotS != files[name] {
			t.Errorf("store %s = %q, want %q", p, gotS, files[name])
		}
	}
	if want, ok := files["log"]; ok {
		gotLog := strings.Join(obs.lines, "\n")
		if gotLog != strings.TrimSuffix(want, "\n") {
			t.Errorf("log = %q\nwant  %q", gotLog, strings.TrimSuffix(want, "\n"))
		}
	}
	_ = sort.Strings
}

type sectionObs struct {
	nopObserver
	mu     sync.Mutex
	events []string
}

func (o *sectionObs) SectionEnter(ev SectionEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, fmt.Sprintf("enter %d %q depth=%d index=%d chain=%v line=%d", ev.ID, ev.Address, ev.Depth, ev.Index, ev.Chain, ev.Line))
}

func (o *sectionObs) SectionExit(ev SectionEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := "<nil>"
	if ev.Reply != nil {
		r = *ev.Reply
	}
	o.events = append(o.events, fmt.Sprintf("exit %d %q reply=%s err=%v", ev.ID, ev.Address, r, ev.Err))
}

// TestObserverEvents checks the section events the language server
// streams: H1 first (id 0), walk entries, chain entries and arms.
func TestObserverEvents(t *testing.T) {
	src := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nreply = execute(\"### C\")\n```\n\n### C\n\n```lua\nreturn \"c\"\n```\n\n" +
		"## B\n\n```lua\nfanout(\"### W\", {1})\nreturn \"end\"\n```\n\n### W\n\n```lua\nreturn \"w\" .. item\n```\n"
	obs := &sectionObs{}
	res, err := Run(context.Background(), parse.Parse("p.md", []byte(src)), Config{Observer: obs})
	if err != nil || res != "end" {
		t.Fatalf("%q %v", res, err)
	}
	want := []string{
		`enter 0 "" depth=0 index=0 chain=false line=7`,
		`exit 0 "" reply=<nil> err=<nil>`,
		`enter 1 "## A" depth=0 index=0 chain=false line=9`,
		`enter 2 "### C" depth=1 index=0 chain=true line=15`,
		`exit 2 "### C" reply=c err=<nil>`,
		`exit 1 "## A" reply=c err=<nil>`,
		`enter 3 "## B" depth=0 index=0 chain=false line=21`,
		`enter 4 "### W" depth=1 index=1 chain=false line=28`,
		`exit 4 "### W" reply=w1 err=<nil>`,
		`exit 3 "## B" reply=end err=<nil>`,
	}
	if got := strings.Join(obs.events, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestReturnLineMemo: the return line of a chunk is the same on every
// call (the memo holds the chunk line), and 0 when the chunk has several
// returns.
func TestReturnLineMemo(t *testing.T) {
	src := "---\nname: t\ndescription: test\npromptforge: 1\n---\n\n# T\n\n## A\n\n```lua\nlocal t = {}\nif t then return t end\nreturn t\n```\n\n## B\n\n```lua\nlocal t = {}\nreturn t\n```\n"
	p := parse.Parse("p.md", []byte(src))
	several, one := p.Sections[0].Blocks[0].Chunk, p.Sections[1].Blocks[0].Chunk
	for i := 0; i < 2; i++ {
		if got := returnLine(several); got != 0 {
			t.Errorf("call %d: two returns: line %d, want 0", i, got)
		}
		if got := returnLine(one); got != 21 {
			t.Errorf("call %d: one return: line %d, want 21", i, got)
		}
	}
}
