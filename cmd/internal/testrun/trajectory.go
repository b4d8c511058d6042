package testrun

// Trajectory assertions (docs/testing.md#trajectories): what the recorded
// run did on its way to the output — the tool calls with their arguments,
// their order, the model rounds, the token usage and the models that
// answered.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Order of expect.tool_calls.
const (
	// OrderAny checks each expected call on its own (the default).
	OrderAny = ""
	// OrderSequence wants the expected calls in this order; other calls
	// may come between them.
	OrderSequence = "sequence"
	// OrderExact wants exactly these calls, in this order, and no others.
	OrderExact = "exact"
)

// CallExpect is one entry of expect.tool_calls.
type CallExpect struct {
	Pos  Pos
	Tool Named
	// Args are matchers on the call's arguments, by JSON path.
	Args []ArgExpect
	// Count bounds how many calls match the entry; nil means at least one.
	Count *Count
}

// ArgExpect is a matcher on one argument of a call: Path is a JSON path
// into the arguments object ("key", "filter.lang", "items[0].id").
type ArgExpect struct {
	Path    string
	Pos     Pos
	steps   []pathStep
	Matcher *Matcher
}

// Count bounds a number; Max < 0 means no upper bound.
type Count struct {
	Pos      Pos
	Min, Max int
}

func (c *Count) holds(n int) bool { return n >= c.Min && (c.Max < 0 || n <= c.Max) }

func (c *Count) String() string {
	switch {
	case c.Min == c.Max:
		return strconv.Itoa(c.Min)
	case c.Max < 0:
		return fmt.Sprintf("at least %d", c.Min)
	case c.Min == 0:
		return fmt.Sprintf("at most %d", c.Max)
	}
	return fmt.Sprintf("%d to %d", c.Min, c.Max)
}

// Limit is an upper bound with its position.
type Limit struct {
	Pos Pos
	Max int64
}

// Rounds bounds the model rounds (models.infer calls included) of a run:
// Max over the whole run, PerSection over each section entry, Sections
// over each entry of the named sections.
type Rounds struct {
	Max        *Limit
	PerSection *Limit
	Sections   []SectionLimit
}

// SectionLimit bounds the rounds of each entry of one section.
type SectionLimit struct {
	Section Named
	Limit   Limit
}

// Tokens bounds the token usage the gateway reported for the run's
// rounds, summed.
type Tokens struct {
	Input, Output *Limit
}

var callKeys = []string{"tool", "args", "count"}

func parseToolCalls(f *File, c *Case, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		f.errorf(pos(v), "test-schema", "`tool_calls` is a list of calls, e.g. `tool_calls: [{tool: search, args: {query: {contains: \"go\"}}}]`")
		return
	}
	for _, it := range v.Content {
		ce := CallExpect{Pos: pos(it)}
		if it.Kind == yaml.ScalarNode && it.Tag != "!!null" {
			// A bare alias: called at least once, any arguments.
			ce.Tool = Named{Name: it.Value, Pos: pos(it)}
			c.Expect.ToolCalls = append(c.Expect.ToolCalls, ce)
			continue
		}
		if it.Kind != yaml.MappingNode {
			f.errorf(pos(it), "test-schema", "a `tool_calls` item is a tool alias or a mapping `{tool: ALIAS, args: {...}, count: N}`")
			continue
		}
		before := len(f.Diags)
		eachKey(f, it, "tool_calls item", callKeys, func(k, v *yaml.Node) {
			switch k.Value {
			case "tool":
				if s, ok := str(f, v, "tool"); ok && s != "" {
					ce.Tool = Named{Name: s, Pos: pos(v)}
				} else if ok {
					f.errorf(pos(v), "test-schema", "`tool` is empty: name the tool alias the model calls")
				}
			case "args":
				if v.Kind != yaml.MappingNode {
					f.errorf(pos(v), "test-schema", "`args` maps argument names (JSON paths such as `filter.lang` or `items[0]`) to matchers")
					return
				}
				for i := 0; i+1 < len(v.Content); i += 2 {
					pk, pv := v.Content[i], v.Content[i+1]
					steps, err := parsePath(pk.Value)
					if err != nil {
						f.errorf(pos(pk), "test-schema", "argument path %q: %v", pk.Value, err)
						continue
					}
					if m := parseMatcher(f, pv, "args."+pk.Value, false); m != nil {
						ce.Args = append(ce.Args, ArgExpect{Path: pk.Value, Pos: pos(pk), steps: steps, Matcher: m})
					}
				}
			case "count":
				ce.Count = parseCount(f, v, "count")
			}
		})
		if ce.Tool.Name == "" {
			if len(f.Diags) == before {
				f.errorf(pos(it), "test-schema", "a `tool_calls` item needs `tool: ALIAS`")
			}
			continue
		}
		c.Expect.ToolCalls = append(c.Expect.ToolCalls, ce)
	}
}

// parseCount reads N or {min: N, max: M}.
func parseCount(f *File, v *yaml.Node, what string) *Count {
	if v.Kind == yaml.ScalarNode {
		n, ok := nonNegInt(f, v, what)
		if !ok {
			return nil
		}
		return &Count{Pos: pos(v), Min: n, Max: n}
	}
	if v.Kind != yaml.MappingNode {
		f.errorf(pos(v), "test-schema", "`%s` is a number or `{min: N, max: M}`", what)
		return nil
	}
	c := &Count{Pos: pos(v), Min: 0, Max: -1}
	set := false
	eachKey(f, v, what, []string{"min", "max"}, func(k, v *yaml.Node) {
		if n, ok := nonNegInt(f, v, what+"."+k.Value); ok {
			set = true
			if k.Value == "min" {
				c.Min = n
			} else {
				c.Max = n
			}
		}
	})
	if !set {
		f.errorf(pos(v), "test-schema", "`%s` needs `min`, `max` or both", what)
		return nil
	}
	if c.Max >= 0 && c.Min > c.Max {
		f.errorf(pos(v), "test-schema", "`%s`: min %d is greater than max %d", what, c.Min, c.Max)
		return nil
	}
	return c
}

func nonNegInt(f *File, v *yaml.Node, what string) (int, bool) {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || n < 0 {
		f.errorf(pos(v), "test-schema", "`%s` must be a whole number, 0 or more", what)
		return 0, false
	}
	return n, true
}

// parseMax reads {max: N}.
func parseMax(f *File, v *yaml.Node, what string) *Limit {
	if v.Kind != yaml.MappingNode {
		f.errorf(pos(v), "test-schema", "`%s` is `{max: N}`", what)
		return nil
	}
	var l *Limit
	eachKey(f, v, what, []string{"max"}, func(k, v *yaml.Node) {
		if n, ok := nonNegInt(f, v, what+".max"); ok {
			l = &Limit{Pos: pos(v), Max: int64(n)}
		}
	})
	if l == nil && len(v.Content) == 0 {
		f.errorf(pos(v), "test-schema", "`%s` needs `max: N`", what)
	}
	return l
}

func parseRounds(f *File, c *Case, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		f.errorf(pos(v), "test-schema", "`rounds` is a mapping: `{max: N}` for the whole run, `per_section: N` for each section entry, `sections: {\"## Name\": N}`")
		return
	}
	r := &Rounds{}
	lim := func(v *yaml.Node, what string) *Limit {
		if n, ok := nonNegInt(f, v, what); ok {
			return &Limit{Pos: pos(v), Max: int64(n)}
		}
		return nil
	}
	eachKey(f, v, "rounds", []string{"max", "per_section", "sections"}, func(k, v *yaml.Node) {
		switch k.Value {
		case "max":
			r.Max = lim(v, "rounds.max")
		case "per_section":
			r.PerSection = lim(v, "rounds.per_section")
		case "sections":
			if v.Kind != yaml.MappingNode {
				f.errorf(pos(v), "test-schema", "`rounds.sections` maps section headings to the most rounds each entry may take, e.g. `{\"## Search\": 3}`")
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				sk, sv := v.Content[i], v.Content[i+1]
				if l := lim(sv, "rounds.sections: "+sk.Value); l != nil {
					r.Sections = append(r.Sections, SectionLimit{Section: Named{Name: sk.Value, Pos: pos(sk)}, Limit: *l})
				}
			}
		}
	})
	c.Expect.Rounds = r
}

func parseTokens(f *File, c *Case, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		f.errorf(pos(v), "test-schema", "`tokens` is `{input: {max: N}, output: {max: N}}`")
		return
	}
	t := &Tokens{}
	eachKey(f, v, "tokens", []string{"input", "output"}, func(k, v *yaml.Node) {
		if k.Value == "input" {
			t.Input = parseMax(f, v, "tokens.input")
		} else {
			t.Output = parseMax(f, v, "tokens.output")
		}
	})
	c.Expect.Tokens = t
}

func parseOrder(f *File, c *Case, v *yaml.Node) {
	if s, ok := str(f, v, "order"); ok {
		if s != OrderSequence && s != OrderExact {
			f.errorf(pos(v), "test-schema", "`order` is `sequence` (these calls in this order, others may come between) or `exact` (exactly these calls, in this order)")
			return
		}
		c.Expect.Order, c.Expect.OrderPos = s, pos(v)
	}
}

func parseNames(f *File, v *yaml.Node, key, example string) []Named {
	if v.Kind != yaml.SequenceNode {
		f.errorf(pos(v), "test-schema", "`%s` is a list, e.g. `%s: [%s]`", key, key, example)
		return nil
	}
	var out []Named
	for _, it := range v.Content {
		if s, ok := str(f, it, key+" item"); ok {
			out = append(out, Named{Name: s, Pos: pos(it)})
		}
	}
	return out
}

// pathStep is one step of an argument path: a key, or an index when key
// is "" and index >= 0.
type pathStep struct {
	key   string
	index int
}

// parsePath reads a JSON path into the arguments object: keys joined with
// dots, [N] for list items; a leading `$.` is allowed. A key holding a dot
// or a bracket is written ["key"].
func parsePath(p string) ([]pathStep, error) {
	s := strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
	if s == "" {
		return nil, fmt.Errorf("empty path: name an argument, e.g. `query` or `filter.lang`")
	}
	var out []pathStep
	for s != "" {
		switch {
		case strings.HasPrefix(s, "["):
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed `[`")
			}
			in := s[1:end]
			if q, err := strconv.Unquote(in); err == nil && strings.HasPrefix(in, `"`) {
				out = append(out, pathStep{key: q, index: -1})
			} else if n, err := strconv.Atoi(in); err == nil && n >= 0 {
				out = append(out, pathStep{index: n})
			} else {
				return nil, fmt.Errorf("`[%s]` is neither a list index nor a quoted key", in)
			}
			s = s[end+1:]
			s = strings.TrimPrefix(s, ".")
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			if end == 0 {
				return nil, fmt.Errorf("empty key")
			}
			out = append(out, pathStep{key: s[:end], index: -1})
			s = s[end:]
			if strings.HasPrefix(s, ".") {
				s = s[1:]
				if s == "" {
					return nil, fmt.Errorf("trailing `.`")
				}
			}
		}
	}
	return out, nil
}

// lookup finds the value at steps in v; a string is returned as is, any
// other value as compact JSON.
func lookup(v any, steps []pathStep) (string, bool) {
	for _, st := range steps {
		if st.index >= 0 && st.key == "" {
			l, ok := v.([]any)
			if !ok || st.index >= len(l) {
				return "", false
			}
			v = l[st.index]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = m[st.key]; !ok {
			return "", false
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	b, _ := json.Marshal(v)
	return string(b), true
}

// call is one tool call of the run, as the trajectory checks see it.
type call struct {
	// Index is 1-based in the run; Round the model round that asked for
	// it, within its section's prose block.
	Index, Round int
	Section      string
	Alias, Args  string
	args         any
	parsed       bool
}

func (c *call) decoded() any {
	if !c.parsed {
		c.parsed = true
		_ = json.Unmarshal([]byte(c.Args), &c.args)
	}
	return c.args
}

// round is one model round of the run.
type round struct {
	SectionID int64
	Section   string
	Model     string
	Usage     bool
	In, Out   int64
}

// matches reports whether the call is the expected tool with matching
// arguments; why says which argument did not match.
func (e *CallExpect) matches(c *call) (ok bool, why string) {
	if c.Alias != e.Tool.Name {
		return false, ""
	}
	for _, a := range e.Args {
		text, present := lookup(c.decoded(), a.steps)
		if ms := a.Matcher.Check("args."+a.Path, text, present); len(ms) > 0 {
			return false, ms[0].Msg
		}
	}
	return true, ""
}

// describe is the expected call as the messages show it.
func (e *CallExpect) describe() string {
	if len(e.Args) == 0 {
		return e.Tool.Name
	}
	var ps []string
	for _, a := range e.Args {
		ps = append(ps, a.Path)
	}
	return fmt.Sprintf("%s with matching %s", e.Tool.Name, strings.Join(ps, ", "))
}

const tableMax = 20

// callTable is the run's tool calls as a short table, one call a line.
func callTable(calls []*call) string {
	if len(calls) == 0 {
		return "\n    (no tool calls)"
	}
	var b strings.Builder
	b.WriteString("\n    #   section / round   tool(args)")
	for i, c := range calls {
		if i == tableMax {
			fmt.Fprintf(&b, "\n    … %d more", len(calls)-tableMax)
			break
		}
		args := c.Args
		if len(args) > 80 {
			args = args[:77] + "…"
		}
		fmt.Fprintf(&b, "\n    %-3d %s / %d   %s(%s)", c.Index, c.Section, c.Round, c.Alias, args)
	}
	return b.String()
}

func where(c *call) string {
	return fmt.Sprintf("call %d (%s, round %d)", c.Index, c.Section, c.Round)
}

// checkTrajectory checks the trajectory expectations against what the
// observer saw. The caller holds o.mu.
func checkTrajectory(e *Expect, o *observer) []Mismatch {
	var out []Mismatch
	fail := func(p Pos, format string, a ...any) {
		out = append(out, Mismatch{Pos: p, Msg: fmt.Sprintf(format, a...)})
	}
	calls := o.calls
	for i := range e.ToolCalls {
		ce := &e.ToolCalls[i]
		n := 0
		var near string
		for _, c := range calls {
			if ok, why := ce.matches(c); ok {
				n++
			} else if why != "" && near == "" {
				near = fmt.Sprintf(" (%s: %s)", where(c), why)
			}
		}
		want := ce.Count
		if want == nil {
			want = &Count{Min: 1, Max: -1}
		}
		if !want.holds(n) {
			p := ce.Pos
			if ce.Count != nil {
				p = ce.Count.Pos
			}
			fail(p, "tool_calls[%d]: %s was called %d time(s), want %s%s; the run's calls:%s", i+1, ce.describe(), n, want, near, callTable(calls))
		}
	}
	switch e.Order {
	case OrderSequence:
		// Greedy: each expected call takes the first matching call after
		// the previous one's.
		next := 0
		for i := range e.ToolCalls {
			ce := &e.ToolCalls[i]
			found := -1
			for k := next; k < len(calls); k++ {
				if ok, _ := ce.matches(calls[k]); ok {
					found = k
					break
				}
			}
			if found < 0 {
				after := "the start"
				if next > 0 {
					after = where(calls[next-1])
				}
				fail(ce.Pos, "tool_calls[%d]: order sequence: no %s after %s; the run's calls:%s", i+1, ce.describe(), after, callTable(calls))
				break
			}
			next = found + 1
		}
	case OrderExact:
		for i := range e.ToolCalls {
			ce := &e.ToolCalls[i]
			if i >= len(calls) {
				fail(ce.Pos, "tool_calls[%d]: order exact: the run made only %d call(s), want %s next; the run's calls:%s", i+1, len(calls), ce.describe(), callTable(calls))
				break
			}
			if ok, why := ce.matches(calls[i]); !ok {
				if why == "" {
					why = "the tool is " + calls[i].Alias
				}
				fail(ce.Pos, "tool_calls[%d]: order exact: %s is not %s (%s); the run's calls:%s", i+1, where(calls[i]), ce.describe(), why, callTable(calls))
				break
			}
		}
		if len(calls) > len(e.ToolCalls) && len(out) == 0 {
			c := calls[len(e.ToolCalls)]
			fail(e.OrderPos, "tool_calls: order exact: %s, %s, is not expected (the case lists %d call(s)); the run's calls:%s", where(c), c.Alias, len(e.ToolCalls), callTable(calls))
		}
	}
	for _, nv := range e.Never {
		for _, c := range calls {
			if c.Alias == nv.Name {
				fail(nv.Pos, "never: %s was called: %s; the run's calls:%s", nv.Name, where(c), callTable(calls))
				break
			}
		}
	}
	if r := e.Rounds; r != nil {
		if r.Max != nil && int64(len(o.rounds)) > r.Max.Max {
			fail(r.Max.Pos, "rounds: the run took %d model round(s), want at most %d (%s)", len(o.rounds), r.Max.Max, roundsBySection(o.rounds))
		}
		per := map[int64]int64{}
		name := map[int64]string{}
		var ids []int64
		for _, rd := range o.rounds {
			if per[rd.SectionID] == 0 {
				ids = append(ids, rd.SectionID)
			}
			per[rd.SectionID]++
			name[rd.SectionID] = rd.Section
		}
		if r.PerSection != nil {
			for _, id := range ids {
				if per[id] > r.PerSection.Max {
					fail(r.PerSection.Pos, "rounds: %s took %d model round(s), want at most %d per section", name[id], per[id], r.PerSection.Max)
				}
			}
		}
		for _, sl := range r.Sections {
			want := headingName(sl.Section.Name)
			for _, id := range ids {
				if name[id] == want && per[id] > sl.Limit.Max {
					fail(sl.Limit.Pos, "rounds: %s took %d model round(s), want at most %d", sl.Section.Name, per[id], sl.Limit.Max)
				}
			}
		}
	}
	if t := e.Tokens; t != nil {
		var in, outTok int64
		missing := 0
		for _, rd := range o.rounds {
			if !rd.Usage {
				missing++
				continue
			}
			in += rd.In
			outTok += rd.Out
		}
		note := ""
		if missing > 0 {
			note = fmt.Sprintf("; %d of %d round(s) carry no usage and count 0", missing, len(o.rounds))
		}
		if len(o.rounds) > 0 && missing == len(o.rounds) {
			p := Pos{}
			if t.Input != nil {
				p = t.Input.Pos
			} else if t.Output != nil {
				p = t.Output.Pos
			}
			fail(p, "tokens: the recording holds no token usage for any of the %d model round(s) (the gateway reported none), so the limit cannot be checked", len(o.rounds))
		} else {
			if t.Input != nil && in > t.Input.Max {
				fail(t.Input.Pos, "tokens: the run used %d input tokens, want at most %d%s", in, t.Input.Max, note)
			}
			if t.Output != nil && outTok > t.Output.Max {
				fail(t.Output.Pos, "tokens: the run used %d output tokens, want at most %d%s", outTok, t.Output.Max, note)
			}
		}
	}
	if len(e.Models) > 0 {
		allowed := map[string]bool{}
		for _, m := range e.Models {
			allowed[m.Name] = true
		}
		used := map[string]bool{}
		var order []string
		for _, rd := range o.rounds {
			if !used[rd.Model] {
				used[rd.Model] = true
				order = append(order, rd.Model)
			}
		}
		answered := strings.Join(order, ", ")
		if answered == "" {
			answered = "none"
		}
		for _, m := range order {
			if !allowed[m] {
				fail(e.Models[0].Pos, "models: %s answered, which the case does not list (answered: %s)", m, answered)
			}
		}
		for _, m := range e.Models {
			if !used[m.Name] {
				fail(m.Pos, "models: %s never answered (answered: %s)", m.Name, answered)
			}
		}
	}
	return out
}

func roundsBySection(rs []round) string {
	var order []string
	n := map[string]int{}
	for _, r := range rs {
		if n[r.Section] == 0 {
			order = append(order, r.Section)
		}
		n[r.Section]++
	}
	for i, s := range order {
		order[i] = fmt.Sprintf("%s: %d", s, n[s])
	}
	return strings.Join(order, ", ")
}

// headingName is the section name a heading like "## Search" refers to,
// as run events name sections.
func headingName(h string) string {
	c := canonicalHeading(h)
	return strings.TrimSpace(strings.TrimLeft(c, "#"))
}

// roundSections are the headings rounds.sections names.
func (e *Expect) roundSections() []Named {
	if e.Rounds == nil {
		return nil
	}
	var out []Named
	for _, sl := range e.Rounds.Sections {
		out = append(out, sl.Section)
	}
	return out
}

// aliasRef is a tool alias the case expects, with the key naming it.
type aliasRef struct {
	key string
	n   Named
}

// aliases are the tool aliases the case names: tools_called, tool_calls
// and never.
func (e *Expect) aliases() []aliasRef {
	var out []aliasRef
	for _, t := range e.ToolsCalled {
		out = append(out, aliasRef{"tools_called", t})
	}
	for _, t := range e.ToolCalls {
		out = append(out, aliasRef{"tool_calls", t.Tool})
	}
	for _, t := range e.Never {
		out = append(out, aliasRef{"never", t})
	}
	return out
}
