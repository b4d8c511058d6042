package parse

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
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
// same thing. It looks the target up in an index of the tree built once
// per prompt, so resolving every reference of a prompt is linear in the
// references, not their product with the sections.
func Resolve(p *Prompt, from *Section, target string) (*Section, error) {
	level, name, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	p.addrsOnce.Do(func() { p.addrs = indexAddresses(p) })
	var parent *Section
	if from != nil {
		parent = from.Parent
	}
	var found *Section
	n := 0
	for _, s := range p.addrs[addrKey{parent, level, name}] {
		if s != from {
			found = s
			n++
		}
	}
	if from != nil {
		for _, s := range p.addrs[addrKey{from, level, name}] {
			found = s
			n++
		}
	}
	if n == 1 {
		return found, nil
	}
	return ResolveFrom(Visible(p, from), from, target)
}

// addrKey is a section's place in the tree: the section whose children it
// is among (nil: the top level), its level and its name.
type addrKey struct {
	parent *Section
	level  int
	name   string
}

func indexAddresses(p *Prompt) map[addrKey][]*Section {
	m := map[addrKey][]*Section{}
	var walk func(parent *Section, ss []*Section)
	walk = func(parent *Section, ss []*Section) {
		for _, s := range ss {
			k := addrKey{parent, s.Level, s.Name}
			m[k] = append(m[k], s)
			walk(s, s.Children)
		}
	}
	walk(nil, p.Sections)
	return m
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
	if r, _ := utf8.DecodeRuneInString(rest); !unicode.IsSpace(r) {
		return 0, "", fmt.Errorf("section heading must have whitespace after the %s markers: %s", t[:level], t)
	}
	return level, name, nil
}

// ResolveIn finds target in an explicit visible set (a fanout arm sees its
// caller's set minus the worker plus the worker's children).
func ResolveIn(vis []*Section, target string) (*Section, error) {
	return ResolveFrom(vis, nil, target)
}

// maxListed is how many visible sections a not-found error names.
const maxListed = 50

// ResolveFrom is ResolveIn for a caller section self (nil: none), which is
// never in its own visible set: a target naming self says so.
func ResolveFrom(vis []*Section, self *Section, target string) (*Section, error) {
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
		why := ""
		if self != nil && self.Level == level && self.Name == name {
			why = ": a section cannot target itself (loop in Lua, or move the repeated part into a child section)"
		}
		if len(vis) == 0 {
			return nil, fmt.Errorf("section heading `%s` not found%s; no sections are visible from here (a section sees its siblings and its children)", t, why)
		}
		names := make([]string, 0, min(len(vis), maxListed))
		for _, s := range vis[:min(len(vis), maxListed)] {
			names = append(names, s.Address())
		}
		more := ""
		if len(vis) > maxListed {
			more = fmt.Sprintf(" and %d more", len(vis)-maxListed)
		}
		return nil, fmt.Errorf("section heading `%s` not found%s; available sections: %s%s", t, why, strings.Join(names, ", "), more)
	}
	return nil, fmt.Errorf("section heading `%s` is ambiguous; more than one visible section matches %s %s", t, strings.Repeat("#", level), name)
}

// FindSection finds a section anywhere in the tree by its heading string,
// for hosts that run one section directly (`forge-lsp run --section`).
func FindSection(p *Prompt, target string) (*Section, error) {
	level, name, err := ParseTarget(target)
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
	if err != nil {
		return nil, bareNameHint(err, target, p, all)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("section heading `%s` not found; sections: %s", strings.TrimSpace(target), strings.Join(all, ", "))
	}
	return nil, fmt.Errorf("section heading `%s` is ambiguous: %d sections match", strings.TrimSpace(target), len(found))
}

// bareNameHint adds to a heading error for a name given without its #
// markers ("Draft") the headings it may mean ("## Draft"), or the
// sections there are.
func bareNameHint(err error, target string, p *Prompt, all []string) error {
	bare := strings.TrimFunc(target, unicode.IsSpace)
	if bare == "" || strings.HasPrefix(bare, "#") {
		return err
	}
	var match []string
	var walk func([]*Section)
	walk = func(ss []*Section) {
		for _, s := range ss {
			if strings.EqualFold(s.Name, bare) {
				match = append(match, fmt.Sprintf("%q", s.Address()))
			}
			walk(s.Children)
		}
	}
	walk(p.Sections)
	if len(match) > 0 {
		return fmt.Errorf("%w; did you mean %s?", err, strings.Join(match, " or "))
	}
	if len(all) > 0 {
		return fmt.Errorf("%w; write the heading with its markers, e.g. %q; sections: %s", err, all[0], strings.Join(all, ", "))
	}
	return err
}
