package api

import "strings"

// Param is one parameter of a function entry, read from its Signature so
// that the table stays the one place a function is described.
type Param struct {
	// Name is the parameter's name ("alias", "..."); Type what follows its
	// colon ("string", `"## Heading"`), empty when the signature gives
	// none.
	Name, Type string
	// Optional is true for a name written with a trailing "?".
	Optional bool
	// Start and End are the byte offsets of the parameter's text in the
	// entry's Signature.
	Start, End int
}

// SectionAddress is the type of a parameter that takes a section address
// (jump, execute, fanout, list_from_section).
const SectionAddress = `"## Heading"`

// Params returns the parameters of a function or method entry, parsed from
// the text between the signature's outermost parentheses (split at
// top-level commas); nil for other entries.
func (e *Entry) Params() []Param {
	if !e.IsFunc() {
		return nil
	}
	sig := e.Signature
	open := strings.IndexByte(sig, '(')
	if open < 0 {
		return nil
	}
	var out []Param
	depth, start := 0, open+1
	add := func(end int) {
		text := sig[start:end]
		lead := len(text) - len(strings.TrimLeft(text, " "))
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		p := Param{Start: start + lead, End: start + lead + len(text)}
		name, typ, _ := strings.Cut(text, ":")
		p.Name, p.Type = strings.TrimSpace(name), strings.TrimSpace(typ)
		if n, ok := strings.CutSuffix(p.Name, "?"); ok {
			p.Name, p.Optional = n, true
		}
		out = append(out, p)
	}
	for i := open + 1; i < len(sig); i++ {
		switch sig[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			if depth == 0 {
				add(i)
				return out
			}
			depth--
		case ',':
			if depth == 0 {
				add(i)
				start = i + 1
			}
		}
	}
	return out
}

// TakesSection reports whether the entry's first parameter is a section
// address.
// It allocates nothing (the analyzer asks it for every call).
func (e *Entry) TakesSection() bool {
	if !e.IsFunc() {
		return false
	}
	_, rest, ok := strings.Cut(e.Signature, "(")
	if !ok {
		return false
	}
	// The section address type holds no comma or bracket, so the first
	// parameter's text ends at the first ',' or ')': a first parameter
	// with nested brackets is cut short and, rightly, does not match.
	if end := strings.IndexAny(rest, ",)"); end >= 0 {
		rest = rest[:end]
	}
	_, typ, _ := strings.Cut(rest, ":")
	return strings.TrimSpace(typ) == SectionAddress
}
