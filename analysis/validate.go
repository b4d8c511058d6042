package analysis

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
)

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]*$`) })

// Validate reports an error if the analyzers or anything they require are
// misconfigured: a bad or duplicate name, an empty Doc, a nil Run, a
// Requires cycle, a code declared by two analyzers or with a bad name or
// no default severity, or a ResultType that does not match the declared
// use.
func Validate(analyzers []*Analyzer) error {
	const (
		white = iota // not visited
		grey         // on the DFS stack
		black        // done
	)
	color := map[*Analyzer]int{}
	names := map[string]*Analyzer{}
	codes := map[string]*Analyzer{}
	var errs []string
	var visit func(a *Analyzer, path []string) bool
	visit = func(a *Analyzer, path []string) bool {
		if a == nil {
			errs = append(errs, "nil analyzer")
			return true
		}
		switch color[a] {
		case grey:
			errs = append(errs, "cycle in Requires: "+strings.Join(append(path, a.Name), " -> "))
			return false
		case black:
			return true
		}
		color[a] = grey
		if !nameRE().MatchString(a.Name) {
			errs = append(errs, fmt.Sprintf("analyzer %q: name must match %s", a.Name, nameRE()))
		}
		if other := names[a.Name]; other != nil && other != a {
			errs = append(errs, fmt.Sprintf("two analyzers named %q", a.Name))
		}
		names[a.Name] = a
		if strings.TrimSpace(a.Doc) == "" {
			errs = append(errs, fmt.Sprintf("analyzer %q has no Doc", a.Name))
		}
		if a.Run == nil {
			errs = append(errs, fmt.Sprintf("analyzer %q has no Run", a.Name))
		}
		for _, c := range a.Codes {
			if c == nil || !nameRE().MatchString(c.Name) {
				errs = append(errs, fmt.Sprintf("analyzer %q: bad code %v", a.Name, c))
				continue
			}
			if c.Severity < Error || c.Severity > Hint {
				errs = append(errs, fmt.Sprintf("code %q: default severity must be error, warning, info or hint", c.Name))
			}
			if c.Summary == "" {
				errs = append(errs, fmt.Sprintf("code %q has no summary", c.Name))
			}
			if other := codes[c.Name]; other != nil && other != a {
				errs = append(errs, fmt.Sprintf("code %q declared by both %q and %q", c.Name, other.Name, a.Name))
			}
			codes[c.Name] = a
		}
		for _, r := range a.Requires {
			if r != nil && r.ResultType == nil {
				errs = append(errs, fmt.Sprintf("analyzer %q requires %q, which has no ResultType", a.Name, r.Name))
			}
			if !visit(r, append(path, a.Name)) {
				color[a] = black
				return false
			}
		}
		color[a] = black
		return true
	}
	for _, a := range analyzers {
		visit(a, nil)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid analyzers:\n\t%s", strings.Join(errs, "\n\t"))
	}
	return nil
}

// checkResult reports whether v is an acceptable result for a.
func checkResult(a *Analyzer, v any) error {
	if a.ResultType == nil {
		if v != nil {
			return fmt.Errorf("analyzer %q returned a %T but declares no ResultType", a.Name, v)
		}
		return nil
	}
	if v == nil || reflect.TypeOf(v) != a.ResultType {
		return fmt.Errorf("analyzer %q returned %T, want %v", a.Name, v, a.ResultType)
	}
	return nil
}
