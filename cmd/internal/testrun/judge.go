package testrun

// Rubric grading (docs/testing.md#rubric-grading-the-judge): after the run, a catalog model
// grades the output against the case's rubric. The judge's catalog fetch
// and chat request go through the run's gateway client, so a recording
// keeps them in the case's cassette and a replay answers them offline; a
// changed rubric, judge prompt or output sends a request the cassette
// does not hold, and the case is stale.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"go.yaml.in/yaml/v3"
)

// DefaultJudgePrompt is the built-in judge prompt. {{rubric}}, {{input}}
// and {{output}} are replaced by the case's rubric, its input and the
// run's output; a judge prompt file (judge.prompt) uses the same
// placeholders.
const DefaultJudgePrompt = `You are grading the output of a program that uses a language model. Judge only whether the output meets the rubric; do not judge anything the rubric does not ask for.

Rubric:
{{rubric}}

The program's input:
<input>
{{input}}
</input>

The output to grade:
<output>
{{output}}
</output>

Answer with a single JSON object and nothing else:
{"reason": "one or two sentences on how the output meets or misses the rubric", "verdict": "pass" or "fail"}`

// Judge is expect.judge.
type Judge struct {
	Pos              Pos
	Rubric           string
	Model            string
	ModelPos         Pos
	Pass             *Matcher
	Prompt, promptIn string
	PromptPos        Pos
}

// Verdict is the judge's answer.
type Verdict struct {
	// Model is the catalog id that judged.
	Model           string
	Verdict, Reason string
}

func parseJudge(f *File, c *Case, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		f.errorf(pos(v), "test-schema", "`judge` is `{rubric: TEXT, model: DESCRIPTION or catalog id, pass: MATCHER}`")
		return
	}
	j := &Judge{Pos: pos(v)}
	before := len(f.Diags)
	eachKey(f, v, "judge", []string{"rubric", "model", "pass", "prompt"}, func(k, v *yaml.Node) {
		switch k.Value {
		case "rubric":
			if s, ok := str(f, v, "judge.rubric"); ok {
				if strings.TrimSpace(s) == "" {
					f.errorf(pos(v), "test-schema", "`judge.rubric` is empty: say what a good output does")
					return
				}
				j.Rubric = s
			}
		case "model":
			if s, ok := str(f, v, "judge.model"); ok {
				if strings.TrimSpace(s) == "" {
					f.errorf(pos(v), "test-schema", "`judge.model` is empty: describe the judge model (like models.bind) or give its catalog id")
					return
				}
				j.Model, j.ModelPos = s, pos(v)
			}
		case "pass":
			j.Pass = parseMatcher(f, v, "judge.pass", false)
		case "prompt":
			if s, ok := str(f, v, "judge.prompt"); ok {
				if s == "" || filepath.IsAbs(s) {
					f.errorf(pos(v), "test-schema", "`judge.prompt` is a file path relative to the test file")
					return
				}
				j.Prompt, j.PromptPos = filepath.Join(f.Dir, filepath.FromSlash(s)), pos(v)
			}
		}
	})
	if len(f.Diags) > before {
		return
	}
	if j.Rubric == "" {
		f.errorf(j.Pos, "test-schema", "`judge` needs `rubric: TEXT` (what the output must do)")
		return
	}
	if j.Model == "" {
		f.errorf(j.Pos, "test-schema", "`judge` needs `model:`, a description of the judge model (as models.bind takes) or its catalog id")
		return
	}
	if j.Pass == nil {
		pass := "pass"
		j.Pass = &Matcher{Pos: j.Pos, Equals: &pass}
	}
	c.Expect.Judge = j
}

// judgeText builds the judge's prompt.
func judgeText(tmpl, rubric, input, output string) string {
	return strings.NewReplacer("{{rubric}}", rubric, "{{input}}", input, "{{output}}", output).Replace(tmpl)
}

// judgeTemplate reads the judge prompt file, or returns the built-in one.
func judgeTemplate(j *Judge, read ReadFunc) (string, error) {
	if j.Prompt == "" {
		return DefaultJudgePrompt, nil
	}
	b, err := read(j.Prompt)
	if err != nil {
		return "", err
	}
	t := string(b)
	if !strings.Contains(t, "{{output}}") {
		return "", fmt.Errorf("the judge prompt %s has no {{output}} placeholder, so the judge would not see the output", filepath.ToSlash(j.Prompt))
	}
	return t, nil
}

// pickJudge chooses the judge model: a catalog id given exactly, else
// the model whose description the picker finds for the description, as
// models.bind does (docs/language.md#models).
func pickJudge(cat []gateway.Model, want string) (string, error) {
	if len(cat) == 0 {
		return "", errors.New("the catalog is empty")
	}
	for _, m := range cat {
		if m.ID == want {
			return m.ID, nil
		}
	}
	entries := make([]toolrule.Entry, len(cat))
	for i, m := range cat {
		entries[i] = toolrule.Entry{ID: toolrule.ID{Server: "gateway", Name: m.ID}, Name: "model", Description: m.Description}
	}
	d := toolrule.NewPicker(entries, toolrule.DefaultPickerConfig()).Resolve(want)
	if err := d.Err("model", want); err != nil {
		return "", err
	}
	return d.IDs[0].Name, nil
}

// errJudgeAnswer marks an answer that is not the JSON verdict.
var errJudgeAnswer = errors.New("judge answer")

// judgeRun asks the judge model for a verdict through the run's client.
func judgeRun(ctx context.Context, client *gateway.Client, j *Judge, tmpl, input, output string) (*Verdict, error) {
	cat, err := client.Models(ctx)
	if err != nil {
		return nil, err
	}
	id, err := pickJudge(cat, j.Model)
	if err != nil {
		return nil, fmt.Errorf("judge.model: %w", err)
	}
	zero := 0.0
	req := &gateway.Request{Model: id, Messages: []gateway.Message{{Role: "user", Content: judgeText(tmpl, j.Rubric, input, output)}}, Temperature: &zero}
	resp, err := client.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	v, err := parseVerdict(resp.Content)
	if err != nil {
		return nil, fmt.Errorf("%w: the judge (%s) did not answer with the JSON verdict: %v; got %s", errJudgeAnswer, id, err, show(resp.Content))
	}
	v.Model = id
	return v, nil
}

// parseVerdict reads {"reason": ..., "verdict": ...} from the judge's
// answer, allowing a Markdown fence or words around the object. A verdict
// that is not a string (a score, a boolean) is kept as its JSON text.
func parseVerdict(s string) (*Verdict, error) {
	start, end := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if start < 0 || end < start {
		return nil, errors.New("no JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s[start:end+1]), &raw); err != nil {
		return nil, err
	}
	vr, ok := raw["verdict"]
	if !ok {
		return nil, errors.New(`no "verdict" key`)
	}
	v := &Verdict{}
	if json.Unmarshal(vr, &v.Verdict) != nil {
		v.Verdict = string(vr)
	}
	if r, ok := raw["reason"]; ok && json.Unmarshal(r, &v.Reason) != nil {
		v.Reason = string(r)
	}
	return v, nil
}

// recordedCatalog reads the model catalog a cassette recorded (its first
// GET models exchange); ok is false when it holds none.
func recordedCatalog(cassette string) (cat []gateway.Model, ok bool) {
	f, _, err := fsread.Open(cassette, fsread.Cassette)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(fsread.Limit(cassette, f, fsread.Cassette))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var ex struct {
			Method, Endpoint, Response string
			Status                     int
		}
		if json.Unmarshal(sc.Bytes(), &ex) != nil || ex.Method != "GET" || ex.Endpoint != "models" || ex.Status != 200 {
			continue
		}
		cat, err := gateway.DecodeCatalog([]byte(ex.Response))
		return cat, err == nil
	}
	return nil, false
}

// validateJudge checks a case's judge against its files: the judge
// prompt reads and has {{output}}, and judge.model matches a model of the
// catalog recorded in the case's cassette (when there is one).
func validateJudge(f *File, c *Case, read ReadFunc) {
	j := c.Expect.Judge
	if j == nil {
		return
	}
	if j.Prompt != "" {
		if err := fsread.Inside(fsread.RepoRoot(f.Dir), j.Prompt, "judge prompt"); err != nil {
			f.errorf(j.PromptPos, "test-path", "%v", err)
		} else if _, err := judgeTemplate(j, read); err != nil {
			f.errorf(j.PromptPos, "test-judge", "judge.prompt: %v", errText(err))
		}
	}
	cas := c.Cassette
	if !fileExists(cas) && fileExists(RepeatCassette(cas, 1)) {
		cas = RepeatCassette(cas, 1)
	}
	cat, ok := recordedCatalog(cas)
	if !ok {
		return
	}
	if _, err := pickJudge(cat, j.Model); err != nil {
		ids := make([]string, len(cat))
		for i, m := range cat {
			ids[i] = m.ID
		}
		f.errorf(j.ModelPos, "test-judge", "judge.model: no model of the catalog recorded in %s matches %q: %v (its models: %s); describe the model as models.bind does, or give a catalog id", filepath.ToSlash(cas), j.Model, err, strings.Join(ids, ", "))
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
