package docs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/session"
)

// Executable documentation (see "Documentation examples" in
// CONTRIBUTING.md): every prompt and Lua example of language.md, and every
// Bad/Fixed example of codes.md, is wrapped into a prompt, parsed, checked and, when it parses,
// run against a scripted gateway. The document carries what each example
// does in an HTML comment right after its closing fence, which renders as
// nothing:
//
//	<!-- example
//	check: clean
//	output: done
//	-->
//
// Keys:
//   - in: h1 puts a Lua example into the H1 instead of a section (a first
//     line `-- H1` does the same);
//   - section: runs only that section, as `forge-lsp run --section` does;
//   - check: the codes `forge-lsp check` reports, sorted and
//     comma-separated, or `clean`;
//   - output: the run's result; error: the run's error as `forge-lsp run`
//     prints it (the prompt is called example.md). A prompt with a parse
//     error is not run and has neither.
//
// A value that starts with `"` is a Go-quoted string. `go test ./docs -run
// TestDocExamples -update` writes the annotations from what the examples do.
//
// A comment `<!-- example-prelude` ... `-->` holds Lua that becomes the H1
// code of every later Lua example without H1 code of its own, and of every
// Markdown fragment without an H1 (the declarations a document's snippets
// assume); `prelude: off` runs an example without it.

// exampleFiles are the documents whose examples run.
var exampleFiles = []string{"language.md", "codes.md"}

// example is one fenced example of a document.
type example struct {
	file string
	// line is the 1-based line of the opening fence.
	line int
	// info is the fence's info string (lua, markdown, yaml, ...).
	info string
	// prelude is the document's H1 code for Lua examples that have none.
	prelude string
	body    string
	// code is, in codes.md, the code the example documents, and bad says
	// whether it is the Bad example (else Fixed).
	code string
	bad  bool
	// ann is the annotation, nil when missing; annStart and annEnd are its
	// 0-based line range (end exclusive), or the insertion point.
	ann              *annotation
	annStart, annEnd int
}

// annotation is what an example is expected to do.
type annotation struct {
	in      string
	prelude string
	section string
	check   string
	output  *string
	err     *string
}

const annOpen, annClose = "<!-- example", "-->"

// preludeOpen starts a document's example prelude: Lua that becomes the
// H1 of every later Lua example that has no H1 code of its own (the
// declarations the document's section snippets assume).
const preludeOpen = "<!-- example-prelude"

var codeHeadingRe = regexp.MustCompile("^### `([a-z0-9-]+)`")

// fenceOpen reports a fence opener: its backticks and info string.
func fenceOpen(line string) (ticks, info string, ok bool) {
	if !strings.HasPrefix(line, "```") {
		return "", "", false
	}
	n := len(line) - len(strings.TrimLeft(line, "`"))
	info = strings.TrimSpace(line[n:])
	if strings.Contains(info, "`") {
		return "", "", false
	}
	return line[:n], info, true
}

// examples finds the examples of file: in codes.md the first fence after
// a "Bad:" or "Fixed:" line, elsewhere every lua and markdown fence.
func examples(t *testing.T, file string, lines []string) []*example {
	var out []*example
	code, label, prelude := "", "", ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == preludeOpen {
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != annClose {
				prelude += lines[j] + "\n"
				j++
			}
			i = j
			continue
		}
		if m := codeHeadingRe.FindStringSubmatch(line); m != nil {
			code = m[1]
		}
		ticks, info, ok := fenceOpen(line)
		if !ok {
			switch s := strings.TrimSpace(line); {
			case s == "Bad:" || s == "Fixed:":
				label = s
			case strings.HasPrefix(s, "#"):
				label = ""
			}
			continue
		}
		j := i + 1
		for j < len(lines) && !(strings.HasPrefix(lines[j], ticks) && strings.Trim(lines[j], "`") == "" && len(lines[j]) >= len(ticks)) {
			j++
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: fence not closed", file, i+1)
		}
		ex := &example{file: file, line: i + 1, info: info, prelude: prelude, body: strings.Join(lines[i+1:j], "\n") + "\n"}
		i = j
		switch {
		case file == "codes.md":
			if label != "Bad:" && label != "Fixed:" {
				label = ""
				continue
			}
			ex.code, ex.bad = code, label == "Bad:"
		case info != "lua" && info != "markdown":
			label = ""
			continue
		}
		label = ""
		readAnnotation(t, ex, lines, j+1)
		out = append(out, ex)
	}
	return out
}

// readAnnotation reads the annotation that starts at line from (blank
// lines skipped), or records where one goes.
func readAnnotation(t *testing.T, ex *example, lines []string, from int) {
	ex.annStart, ex.annEnd = from, from
	k := from
	for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
		k++
	}
	if k == len(lines) || strings.TrimSpace(lines[k]) != annOpen {
		return
	}
	a := &annotation{}
	end := k + 1
	for ; end < len(lines) && strings.TrimSpace(lines[end]) != annClose; end++ {
		key, val, ok := strings.Cut(lines[end], ":")
		val = strings.TrimSpace(val)
		if strings.HasPrefix(val, `"`) {
			u, err := strconv.Unquote(val)
			if err != nil {
				t.Errorf("%s:%d: bad quoted value: %v", ex.file, end+1, err)
			}
			val = u
		}
		switch key = strings.TrimSpace(key); {
		case !ok:
			t.Errorf("%s:%d: annotation line %q is not `key: value`", ex.file, end+1, lines[end])
		case key == "in":
			a.in = val
		case key == "section":
			a.section = val
		case key == "prelude":
			a.prelude = val
		case key == "check":
			a.check = val
		case key == "output":
			a.output = &val
		case key == "error":
			a.err = &val
		default:
			t.Errorf("%s:%d: unknown annotation key %q (in, prelude, section, check, output, error)", ex.file, end+1, key)
		}
	}
	if end == len(lines) {
		t.Fatalf("%s:%d: annotation not closed with a %q line", ex.file, k+1, annClose)
	}
	ex.ann, ex.annStart, ex.annEnd = a, k, end+1
}

// String formats the annotation as it is written in the document.
func (a *annotation) String() string {
	var b strings.Builder
	b.WriteString(annOpen + "\n")
	field := func(k, v string) {
		if v == "" || strings.ContainsAny(v, "\n\r\t\"`") || strings.TrimSpace(v) != v || !strconv.CanBackquote(v) {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	if a.in != "" {
		field("in", a.in)
	}
	if a.prelude != "" {
		field("prelude", a.prelude)
	}
	if a.section != "" {
		field("section", a.section)
	}
	field("check", a.check)
	if a.output != nil {
		field("output", *a.output)
	}
	if a.err != nil {
		field("error", *a.err)
	}
	b.WriteString(annClose)
	return b.String()
}

const wrapFrontmatter = "---\nname: example\ndescription: A documentation example\npromptforge: 1\n---\n\n"

var (
	h1MarkRe      = regexp.MustCompile(`^-- (H1|in the H1)\b`)
	sectionMarkRe = regexp.MustCompile(`^-- (in )?(a|the) section\b`)
)

// splitLua splits a Lua example into its H1 and section code. Comment
// lines say where the code after them goes (`-- H1`, `-- in the H1
// block`, `-- in a section`); code before a section marker is H1 code,
// and an example without markers is section code unless annotated
// `in: h1`.
func (ex *example) splitLua() (h1, sec string) {
	lines := strings.SplitAfter(ex.body, "\n")
	inH1 := ex.ann != nil && ex.ann.in == "h1"
	for _, l := range lines {
		if sectionMarkRe.MatchString(l) {
			inH1 = true
			break
		}
	}
	if ex.ann != nil && ex.ann.in == "section" {
		inH1 = false
	}
	for _, l := range lines {
		switch {
		case h1MarkRe.MatchString(l):
			inH1 = true
		case sectionMarkRe.MatchString(l):
			inH1 = false
		}
		if inH1 {
			h1 += l
		} else {
			sec += l
		}
	}
	return h1, sec
}

// preludeCode is the document's prelude, unless the example is annotated
// `prelude: off`.
func (ex *example) preludeCode() string {
	if ex.ann != nil && ex.ann.prelude == "off" {
		return ""
	}
	return ex.prelude
}

// prompt wraps the example into a whole prompt: the usual frontmatter and
// `# Example` around it, unless it has its own.
func (ex *example) prompt() string {
	body := ex.body
	switch ex.info {
	case "lua":
		h1, sec := ex.splitLua()
		if h1 == "" {
			h1 = ex.preludeCode()
		}
		out := wrapFrontmatter + "# Example\n\n"
		if h1 != "" {
			out += "```lua\n" + h1 + "```\n\n"
		}
		if sec != "" {
			out += "## Example\n\n```lua\n" + sec + "```\n"
		}
		return out
	case "yaml":
		if strings.HasPrefix(body, "---\n") {
			return body + "\n# Example\n"
		}
		fm := body
		for _, kv := range []string{"name: example", "description: A documentation example", "promptforge: 1"} {
			if !regexp.MustCompile(`(?m)^` + strings.SplitN(kv, ":", 2)[0] + `:`).MatchString(body) {
				fm += kv + "\n"
			}
		}
		return "---\n" + fm + "---\n\n# Example\n"
	}
	if !strings.HasPrefix(body, "---\n") {
		if !hasHeading(body, 0) {
			// Bare section content: a section of its own.
			body = "## Example\n\n" + body
		}
		if !hasHeading(body, 1) {
			if p := ex.preludeCode(); p != "" {
				body = "```lua\n" + p + "```\n\n" + body
			}
			body = "# Example\n\n" + body
		}
		body = wrapFrontmatter + body
	}
	return body
}

// hasHeading says whether Markdown text has an ATX heading outside fences
// of the given level (0: any level).
func hasHeading(s string, level int) bool {
	ticks := ""
	for _, l := range strings.Split(s, "\n") {
		if ticks != "" {
			if strings.HasPrefix(l, ticks) && strings.Trim(l, "`") == "" {
				ticks = ""
			}
			continue
		}
		if tk, _, ok := fenceOpen(l); ok {
			ticks = tk
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if n == 0 || n > 6 || (n < len(l) && l[n] != ' ') {
			continue
		}
		if level == 0 || n == level {
			return true
		}
	}
	return false
}

// docGateway is the scripted gateway the examples run against: a catalog
// with the models the documents bind, and a model that answers every
// request with "echo: " and the last user message.
func docGateway(t *testing.T) *gatewaytest.Server {
	srv := gatewaytest.New(t, "docs-key")
	srv.Catalog = []gateway.Model{
		{ID: "writer-model", Description: "A careful model for summarising and writing", Context: 32768, Thinking: "switchable", ToolDialect: "openai"},
		{ID: "fast-model", Description: "A small fast model for quick answers", Context: 8192, Thinking: "never", ToolDialect: "openai"},
	}
	srv.Script = func(req *gateway.Request) gatewaytest.Reply {
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = m.Content
			}
		}
		return gatewaytest.Text("echo: " + last)
	}
	return srv
}

var nonceRe = regexp.MustCompile(`untrusted_input_[0-9a-f]{32}`)

// behave runs the example and returns what it does.
func (ex *example) behave(srv *gatewaytest.Server) *annotation {
	src := ex.prompt()
	got := &annotation{check: "clean"}
	if ex.ann != nil {
		got.in, got.prelude, got.section = ex.ann.in, ex.ann.prelude, ex.ann.section
	}
	p := parse.Parse("example.md", []byte(src))
	var codes []string
	for _, d := range checker.Check(p, nil) {
		if !slices.Contains(codes, d.Code) {
			codes = append(codes, d.Code)
		}
	}
	if len(codes) > 0 {
		slices.Sort(codes)
		got.check = strings.Join(codes, ", ")
	}
	if len(p.Errors) > 0 {
		return got
	}
	// No wall-clock deadline: the run's own budgets end every example
	// (the jump-cycle one makes 500 model rounds, seconds under load),
	// and `go test -timeout` bounds a hang.
	ctx := context.Background()
	env := func(k string) (string, bool) {
		if k == gateway.EnvKey {
			return srv.Key, true
		}
		return "", false
	}
	s, err := session.Open(session.Options{Path: "example.md", Source: []byte(src), Execution: "example", Section: got.section,
		Gateway: session.Gateway{URL: srv.BaseURL()}, Env: env})
	var res string
	if err == nil {
		res, err = s.Run(ctx)
		s.Close()
	}
	var re *run.RunError
	switch {
	case err == nil:
		res = nonceRe.ReplaceAllString(res, "untrusted_input_<N>")
		got.output = &res
	case errors.As(err, &re):
		msg := nonceRe.ReplaceAllString(re.Located("example.md"), "untrusted_input_<N>")
		got.err = &msg
	default:
		msg := "example.md: " + err.Error()
		got.err = &msg
	}
	return got
}

// TestDocExamples runs the examples of language.md and codes.md and
// compares what they do with their annotations.
func TestDocExamples(t *testing.T) {
	srv := docGateway(t)
	total := 0
	for _, file := range exampleFiles {
		doc := read(t, file)
		lines := strings.Split(doc, "\n")
		exs := examples(t, file, lines)
		total += len(exs)
		got := make([]*annotation, len(exs))
		var mu sync.Mutex
		t.Run(strings.TrimSuffix(file, ".md"), func(t *testing.T) {
			for i, ex := range exs {
				t.Run(strconv.Itoa(ex.line), func(t *testing.T) {
					t.Parallel()
					g := ex.behave(srv)
					mu.Lock()
					got[i] = g
					mu.Unlock()
					if ex.code != "" {
						checkCodesExample(t, ex, g)
					}
					if *update {
						return
					}
					if msg := verdict(ex, g); msg != "" {
						t.Error(msg)
					}
				})
			}
		})
		if *update && !t.Failed() {
			rewriteAnnotations(t, file, lines, exs, got)
		}
	}
	t.Logf("ran %d documentation examples", total)
	if total < 100 {
		t.Errorf("found %d examples in %v, want at least 100: did the example finder break?", total, exampleFiles)
	}
}

// verdict compares what example ex did (got) with its annotation and
// returns the failure message, or "".
func verdict(ex *example, got *annotation) string {
	if ex.ann == nil {
		return fmt.Sprintf("%s:%d: this example has no expectation. Add these lines right after its closing fence (or run `go test ./docs -run TestDocExamples -update`):\n%s\nThe prompt it ran:\n%s", ex.file, ex.line, got, numbered(ex.prompt()))
	}
	if want := ex.ann.String(); want != got.String() {
		return fmt.Sprintf("%s:%d: the example's behaviour differs from its annotation at line %d.\nannotation:\n%s\nwhat it does now:\n%s\nIf the new behaviour is right, replace the annotation with the second one (or run `go test ./docs -run TestDocExamples -update`). The prompt it ran:\n%s",
			ex.file, ex.line, ex.annStart+1, want, got, numbered(ex.prompt()))
	}
	return ""
}

// TestDocExamplesCatchDrift: an example without an annotation, and one
// whose annotation no longer says what it does, fail with the annotation
// to write; a true annotation passes.
func TestDocExamplesCatchDrift(t *testing.T) {
	srv := docGateway(t)
	doc := "Intro.\n\n```lua\nreturn 1 + 1\n```\n\nText.\n\n```lua\nreturn 1 + 1\n```\n<!-- example\ncheck: clean\noutput: 3\n-->\n\n```lua\nreturn 1 + 1\n```\n<!-- example\ncheck: clean\noutput: 2\n-->\n"
	exs := examples(t, "x.md", strings.Split(doc, "\n"))
	if len(exs) != 3 {
		t.Fatalf("found %d examples, want 3", len(exs))
	}
	var msgs []string
	for _, ex := range exs {
		msgs = append(msgs, verdict(ex, ex.behave(srv)))
	}
	want := "<!-- example\ncheck: clean\noutput: 2\n-->"
	if !strings.Contains(msgs[0], "x.md:3: this example has no expectation") || !strings.Contains(msgs[0], want) {
		t.Errorf("missing annotation: %q", msgs[0])
	}
	if !strings.Contains(msgs[1], "x.md:9: the example's behaviour differs from its annotation at line 12") || !strings.Contains(msgs[1], want) {
		t.Errorf("stale annotation: %q", msgs[1])
	}
	if msgs[2] != "" {
		t.Errorf("true annotation: %q", msgs[2])
	}
}

// checkCodesExample holds a codes.md example to its heading: the Bad
// example reports the code, the Fixed one does not.
func checkCodesExample(t *testing.T, ex *example, g *annotation) {
	has := slices.Contains(strings.Split(g.check, ", "), ex.code)
	switch {
	case ex.bad && !has:
		t.Errorf("%s:%d: the Bad example of `%s` does not report it (check: %s)", ex.file, ex.line, ex.code, g.check)
	case !ex.bad && has:
		t.Errorf("%s:%d: the Fixed example of `%s` still reports it", ex.file, ex.line, ex.code)
	}
}

// rewriteAnnotations writes got into file as the examples' annotations.
func rewriteAnnotations(t *testing.T, file string, lines []string, exs []*example, got []*annotation) {
	var out []string
	prev := 0
	for i, ex := range exs {
		out = append(out, lines[prev:ex.annStart]...)
		out = append(out, strings.Split(got[i].String(), "\n")...)
		prev = ex.annEnd
	}
	out = append(out, lines[prev:]...)
	if err := os.WriteFile(file, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// numbered prefixes each line of s with its number.
func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}
