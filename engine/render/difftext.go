package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteDiff prints the diffs of several prompts in format.
func WriteDiff(w io.Writer, diffs []*FileDiff, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if diffs == nil {
			diffs = []*FileDiff{}
		}
		return enc.Encode(diffs)
	case FormatMarkdown:
		_, err := io.WriteString(w, DiffMarkdown(diffs))
		return err
	case FormatText, "":
		_, err := io.WriteString(w, DiffText(diffs))
		return err
	}
	return fmt.Errorf("unknown format %q (text, json or markdown)", format)
}

// DiffText is the diffs for a terminal.
func DiffText(diffs []*FileDiff) string {
	if len(diffs) == 0 {
		return "no prompt changed\n"
	}
	var sb strings.Builder
	for i, fd := range diffs {
		if i > 0 {
			sb.WriteString("\n")
		}
		fmt.Fprintf(&sb, "%s (%s", fd.Path, fd.Status)
		if fd.OldPath != "" {
			fmt.Fprintf(&sb, " from %s", fd.OldPath)
		}
		fmt.Fprintf(&sb, "): %s\n", changeText(fd.Run))
		for _, rd := range fd.Rounds {
			if rd.Status == "" && rd.Moved == "" {
				continue
			}
			status := rd.Status
			if status == "" {
				status = "moved"
			}
			fmt.Fprintf(&sb, "  %s: %s, %s\n", rd.Key, status, changeText(rd.Tokens))
			for _, l := range roundChangeLines(rd) {
				fmt.Fprintf(&sb, "    %s\n", l)
			}
		}
		sb.WriteString("  per section:\n")
		for _, c := range fd.Sections {
			fmt.Fprintf(&sb, "    %s: %s\n", c.Name, changeText(c))
		}
		fmt.Fprintf(&sb, "    run: %s\n", changeText(fd.Run))
	}
	return sb.String()
}

// DiffMarkdown is the diffs for a pull request (the Action's review).
func DiffMarkdown(diffs []*FileDiff) string {
	var sb strings.Builder
	sb.WriteString("## What the model sees: prompt changes\n\n")
	if len(diffs) == 0 {
		sb.WriteString("No prompt changed.\n")
		return sb.String()
	}
	sb.WriteString("| prompt | status | rounds changed | input tokens | cost (input) |\n|---|---|---|---|---|\n")
	for _, fd := range diffs {
		changed := 0
		for _, rd := range fd.Rounds {
			if rd.Status != "" || rd.Moved != "" {
				changed++
			}
		}
		fmt.Fprintf(&sb, "| `%s` | %s | %d of %d | %s | %s |\n", fd.Path, statusText(fd), changed, len(fd.Rounds), tokenCell(fd.Run), costCell(fd.Run))
	}
	for _, fd := range diffs {
		fmt.Fprintf(&sb, "\n### `%s` (%s)\n", fd.Path, statusText(fd))
		for _, rd := range fd.Rounds {
			if rd.Status == "" && rd.Moved == "" {
				continue
			}
			status := rd.Status
			if status == "" {
				status = "moved"
			}
			fmt.Fprintf(&sb, "\n#### %s: %s\n\n- input tokens: %s\n", rd.Key, status, tokenCell(rd.Tokens))
			for _, l := range roundChangeLines(rd) {
				if strings.HasPrefix(l, "words: ") {
					fmt.Fprintf(&sb, "- words:\n\n%s\n", indent(fence(strings.TrimPrefix(l, "words: "), "diff"), "  "))
					continue
				}
				fmt.Fprintf(&sb, "- %s\n", l)
			}
		}
		sb.WriteString("\n| section | input tokens | cost (input) |\n|---|---|---|\n")
		for _, c := range fd.Sections {
			fmt.Fprintf(&sb, "| %s | %s | %s |\n", c.Name, tokenCell(c), costCell(c))
		}
		fmt.Fprintf(&sb, "| **run** | %s | %s |\n", tokenCell(fd.Run), costCell(fd.Run))
	}
	sb.WriteString("\nTokens are the known part of each round's input, counted as the context budgets count them; replies and the run input are slots and not counted (`forge-lsp render`, docs/review.md).\n")
	return sb.String()
}

func statusText(fd *FileDiff) string {
	if fd.OldPath != "" {
		return fmt.Sprintf("%s from `%s`", fd.Status, fd.OldPath)
	}
	return fd.Status
}

// roundChangeLines describes a changed round, one line per aspect.
func roundChangeLines(rd RoundDiff) []string {
	var out []string
	switch rd.Status {
	case Added:
		out = append(out, "new round: "+summaryLine(rd.NewRound))
	case Removed:
		out = append(out, "round removed: "+summaryLine(rd.OldRound))
	}
	if rd.Moved != "" {
		out = append(out, "moved: "+rd.Moved)
	}
	if rd.Model != "" {
		out = append(out, "model: "+rd.Model)
	}
	out = append(out, rd.Tools...)
	if rd.Words != "" {
		out = append(out, "words: "+rd.Words)
	}
	return out
}

// summaryLine is the start of a round's last message.
func summaryLine(rd *Round) string {
	if rd == nil || len(rd.Request.Messages) == 0 {
		return ""
	}
	s := strings.Join(strings.Fields(rd.Request.Messages[len(rd.Request.Messages)-1].Content), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}

func changeText(c Change) string {
	s := fmt.Sprintf("%d → %d tokens (%+d)", c.OldTokens, c.NewTokens, c.Delta())
	if c.OldCost != nil || c.NewCost != nil {
		s += ", cost " + costChange(c)
	}
	return s
}

func tokenCell(c Change) string {
	return fmt.Sprintf("%d → %d (%+d)", c.OldTokens, c.NewTokens, c.Delta())
}

func costCell(c Change) string {
	if c.OldCost == nil && c.NewCost == nil {
		return "no prices"
	}
	return costChange(c)
}

func costChange(c Change) string {
	side := func(v *float64, tokens int) string {
		switch {
		case v != nil:
			return money(*v)
		case tokens == 0:
			return money(0)
		}
		return "?"
	}
	s := side(c.OldCost, c.OldTokens) + " → " + side(c.NewCost, c.NewTokens)
	if c.OldCost != nil && c.NewCost != nil {
		s += fmt.Sprintf(" (%+.6f)", *c.NewCost-*c.OldCost)
	}
	return s
}
