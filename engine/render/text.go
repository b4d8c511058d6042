package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Formats of Write.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Write prints res in format (FormatText, FormatMarkdown or FormatJSON).
func Write(w io.Writer, res *Result, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	case FormatMarkdown:
		_, err := io.WriteString(w, Markdown(res))
		return err
	case FormatText, "":
		_, err := io.WriteString(w, Text(res))
		return err
	}
	return fmt.Errorf("unknown format %q (text, json or markdown)", format)
}

// Text is res for a terminal.
func Text(res *Result) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s\n", res.Path, summary(res))
	for _, g := range groupRounds(res.Rounds) {
		rd := g[0]
		fmt.Fprintf(&sb, "\n=== %s\n", roundTitle(rd))
		fmt.Fprintf(&sb, "tokens: %s\n", TokenRange(rd.Tokens))
		if rd.OverContext {
			fmt.Fprintf(&sb, "warning: %s\n", overContext(rd))
		}
		if rd.Cost != nil {
			fmt.Fprintf(&sb, "cost: %s\n", CostText(rd.Cost))
		}
		for _, m := range rd.Request.Messages {
			fmt.Fprintf(&sb, "--- %s\n%s\n", m.Role, m.Content)
		}
		if len(rd.Request.Tools) > 0 {
			fmt.Fprintf(&sb, "--- tools (%d)\n", len(rd.Request.Tools))
			for _, t := range rd.Request.Tools {
				fmt.Fprintf(&sb, "%s: %s\n  parameters: %s\n", t.Function.Name, t.Function.Description, compactJSON(t.Function.Parameters))
			}
		}
		fmt.Fprintf(&sb, "--- reply\n%s\n", rd.Reply)
		if rd.Note != "" {
			fmt.Fprintf(&sb, "note: %s\n", rd.Note)
		}
		for _, a := range g[1:] {
			fmt.Fprintf(&sb, "+ arm %d: %s; %s\n", a.Arm, TokenRange(a.Tokens), armDifference(rd, a))
		}
	}
	if res.Stopped != "" {
		fmt.Fprintf(&sb, "\nstopped%s: %s\n", lineSuffix(res.StoppedLine), res.Stopped)
	}
	return sb.String()
}

// Markdown is res for a pull request or an editor view.
func Markdown(res *Result) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "## `%s`\n\n%s\n", res.Path, summary(res))
	for _, g := range groupRounds(res.Rounds) {
		rd := g[0]
		fmt.Fprintf(&sb, "\n### %s\n\n", roundTitle(rd))
		fmt.Fprintf(&sb, "- tokens: %s\n", TokenRange(rd.Tokens))
		if rd.OverContext {
			fmt.Fprintf(&sb, "- ⚠️ %s\n", overContext(rd))
		}
		if rd.Cost != nil {
			fmt.Fprintf(&sb, "- cost: %s\n", CostText(rd.Cost))
		}
		for _, m := range rd.Request.Messages {
			fmt.Fprintf(&sb, "\n**%s**\n\n%s\n", m.Role, fence(m.Content, "text"))
		}
		if len(rd.Request.Tools) > 0 {
			fmt.Fprintf(&sb, "\n**tools** (%d)\n\n", len(rd.Request.Tools))
			for _, t := range rd.Request.Tools {
				fmt.Fprintf(&sb, "- `%s`: %s\n", t.Function.Name, t.Function.Description)
				fmt.Fprintf(&sb, "  <details><summary>parameters</summary>\n\n%s\n\n  </details>\n", indent(fence(compactJSON(t.Function.Parameters), "json"), "  "))
			}
		}
		fmt.Fprintf(&sb, "\n**reply**: %s\n", rd.Reply)
		if rd.Note != "" {
			fmt.Fprintf(&sb, "\n> %s\n", rd.Note)
		}
		for _, a := range g[1:] {
			fmt.Fprintf(&sb, "- arm %d: %s; %s\n", a.Arm, TokenRange(a.Tokens), armDifference(rd, a))
		}
	}
	if res.Stopped != "" {
		fmt.Fprintf(&sb, "\n**stopped%s**: %s\n", lineSuffix(res.StoppedLine), res.Stopped)
	}
	return sb.String()
}

// overContext explains a round whose known part exceeds its model's
// context.
func overContext(rd *Round) string {
	return fmt.Sprintf("the known part alone (%d tokens) exceeds the context of model %s (%d tokens): shorten the prose, offer fewer tools, or bind a model with a larger context",
		rd.Tokens.Known, rd.Request.Model, rd.Model.Context)
}

func summary(res *Result) string {
	var parts []string
	parts = append(parts, plural(len(res.Rounds), "model round"))
	parts = append(parts, "input tokens "+TokenRange(res.Tokens))
	if res.Cost != nil {
		parts = append(parts, "cost "+CostText(res.Cost))
	}
	over := 0
	for _, rd := range res.Rounds {
		if rd.OverContext {
			over++
		}
	}
	if over > 0 {
		parts = append(parts, plural(over, "round")+" over the model's context")
	}
	if res.Synthetic {
		parts = append(parts, "no model catalog (--gateway-config): every binding shows as "+SyntheticModel)
	}
	return strings.Join(parts, "; ")
}

func roundTitle(rd *Round) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "round %d · %s", rd.N, rd.Section)
	if rd.Arm > 0 {
		fmt.Fprintf(&sb, " (fanout arm %d)", rd.Arm)
	}
	if rd.Line > 0 {
		fmt.Fprintf(&sb, " · line %d", rd.Line)
	}
	if rd.Infer {
		sb.WriteString(" · models.infer")
	}
	if rd.Round > 1 {
		fmt.Fprintf(&sb, " · loop round %d", rd.Round)
	}
	fmt.Fprintf(&sb, " · model %s", rd.Request.Model)
	if rd.Model != nil && rd.Model.Context > 0 {
		fmt.Fprintf(&sb, " (context %d)", rd.Model.Context)
	}
	return sb.String()
}

// TokenRange prints tokens as "N" when exact, else "known + slots =
// min..max" (max "?" when unbounded).
func TokenRange(t Tokens) string {
	if len(t.Slots) == 0 && t.Max != nil && *t.Max == t.Min {
		return strconv.Itoa(t.Min)
	}
	max := "?"
	if t.Max != nil {
		max = strconv.Itoa(*t.Max)
	}
	if len(t.Slots) == 0 {
		return fmt.Sprintf("%d..%s", t.Min, max)
	}
	names := make([]string, len(t.Slots))
	for i, s := range t.Slots {
		smax := "?"
		if s.Max != nil {
			smax = strconv.Itoa(*s.Max)
		}
		names[i] = fmt.Sprintf("%s %d..%s", s.Slot, s.Min, smax)
	}
	return fmt.Sprintf("%d known + %s = %d..%s", t.Known, strings.Join(names, " + "), t.Min, max)
}

// CostText prints a cost: the input's range and the reply's bound.
func CostText(c *Cost) string {
	in := money(c.InputMin)
	switch {
	case c.InputMax == nil:
		in += "..?"
	case *c.InputMax != c.InputMin:
		in += ".." + money(*c.InputMax)
	}
	out := "reply unbounded (no max_tokens)"
	if c.OutputMax != nil {
		out = "reply at most " + money(*c.OutputMax)
	}
	return "input " + in + ", " + out
}

func money(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func lineSuffix(line int) string {
	if line > 0 {
		return fmt.Sprintf(" at line %d", line)
	}
	return ""
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// fence wraps s in a code fence longer than any backtick run inside.
func fence(s, lang string) string {
	n := 3
	for run, i := 0, 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			if run >= n {
				n = run + 1
			}
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + lang + "\n" + s + "\n" + f
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}

// groupRounds folds the arms of one fanout: consecutive rounds of the same
// section and prose line in arms 2, 3, … follow the first arm's round,
// shown in full once.
func groupRounds(rounds []*Round) [][]*Round {
	var out [][]*Round
	for _, rd := range rounds {
		if n := len(out); n > 0 {
			first := out[n-1][0]
			if rd.Arm > 1 && first.Arm > 0 && rd.Section == first.Section && rd.Line == first.Line && rd.Round == first.Round && rd.Infer == first.Infer {
				out[n-1] = append(out[n-1], rd)
				continue
			}
		}
		out = append(out, []*Round{rd})
	}
	return out
}

// armDifference says how another arm's round differs from the first's:
// the words of its messages that are not the first arm's.
func armDifference(first, other *Round) string {
	ops := WordDiff(roundWords(first), roundWords(other))
	var ins []string
	for _, op := range ops {
		if op.Kind == Insert {
			ins = append(ins, op.Text)
		}
	}
	if len(ins) == 0 {
		return "the same messages"
	}
	return "differs by: " + strings.Join(ins, " … ")
}

// roundWords is the text of a round's messages and tools, as one string.
func roundWords(rd *Round) string {
	var sb strings.Builder
	for _, m := range rd.Request.Messages {
		sb.WriteString(m.Content)
		sb.WriteString("\n")
	}
	for _, t := range rd.Request.Tools {
		fmt.Fprintf(&sb, "%s: %s %s\n", t.Function.Name, t.Function.Description, compactJSON(t.Function.Parameters))
	}
	return sb.String()
}
