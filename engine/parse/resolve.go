package parse

import (
	"fmt"
	"strings"
	"unicode"
)

// Visible returns the sections a caller may address with jump, execute,
// fanout and list_from_section (docs/language.md#control-flow): its
// siblings minus itself, plus its direct children, in file order
// (siblings first). from == nil means the top level (the H1), which sees
// every top-level section.
func Visible(p *Prompt, from *Section) []*Section {
	if from == nil {
		return append([]*Section(nil), p.Sections...)
	}
	var out []*Section
	for _, s := range Siblings(p, from) {
		if s != from {
			out = append(out, s)
		}
	}
	return append(out, from.Children...)
}

// Siblings returns the list s belongs to (its parent's children or the
// top-level sections).
func Siblings(p *Prompt, s *Section) []*Section {
	if s.Parent != nil {
		return s.Parent.Children
	}
	return p.Sections
}

// Resolve finds target ("## Name") in from's visible set. Errors carry the
// upstream's texts, so that the analyzer, the server and a run all say the
// same thing.
func Resolve(p *Prompt, from *Section, target string) (*Section, error) {
	return ResolveIn(Visible(p, from), target)
}

// ParseTarget splits a heading string into level and name ("##  Name" is level 2, name "Name"; the markers must be followed by
// white space).
func ParseTarget(target string) (level int, name string, err error) {
	t := strings.TrimFunc(target, unicode.IsSpace)
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 {
		return 0, "", fmt.Errorf("section heading must include ### markers, got bare name: %s", t)
	}
	rest := t[level:]
	name = strings.TrimFunc(rest, unicode.IsSpace)
	if name == "" {
		return 0, "", fmt.Errorf("section heading has no name: %s", t)
	}
	if r := []rune(rest)[0]; !unicode.IsSpace(r) {
		return 0, "", fmt.Errorf("section heading must have whitespace after the %s markers: %s", t[:level], t)
	}
	return level, name, nil
}

// ResolveIn finds target in an explicit visible set (a fanout arm sees its
// caller's set minus the worker plus the worker's children).
func ResolveIn(vis []*Section, target string) (*Section, error) {
	level, name, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	t := strings.TrimFunc(target, unicode.IsSpace)
	var found []*Section
	for _, s := range vis {
		if s.Level == level && s.Name == name {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		names := make([]string, len(vis))
		for i, s := range vis {
			names[i] = s.Address()
		}
		return nil, fmt.Errorf("section heading `%s` not found; available sections: %s", t, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("section heading `%s` is ambiguous; more than one visible section matches %s %s", t, strings.Repeat("#", level), name)
}

// FindSection finds a section anywhere in the tree by its heading string,
// for hosts that run one section directly (`forge-lsp run --section`).
func FindSection(p *Prompt, target string) (*Section, error) {
	level, name, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	var found []*Section
	var all []string
	var walk func([]*Section)
	walk = func(ss []*Section) {
		for _, s := range ss {
			all = append(all, s.Address())
			if s.Level == level && s.Name == name {
				found = append(found, s)
			}
			walk(s.Children)
		}
	}
	walk(p.Sections)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("section heading `%s` not found; sections: %s", strings.TrimSpace(target), strings.Join(all, ", "))
	}
	return nil, fmt.Errorf("section heading `%s` is ambiguous: %d sections match", strings.TrimSpace(target), len(found))
}
