package rules

import (
	"fmt"
	"strings"
)

// MaxPathBytes caps a store path or glob pattern.
const MaxPathBytes = 1024

// MaxSegmentBytes caps one path segment: file systems allow 255 bytes per
// name, and a store dump writes each file under a temporary name 18 bytes
// longer before renaming it into place.
const MaxSegmentBytes = 200

func pathErr(p, reason string) error {
	return fmt.Errorf("invalid path %q: %s", p, reason)
}

// reserved reports whether an upper-cased base name is a Windows device
// name: CON, PRN, AUX, NUL, COM1-COM9, LPT1-LPT9.
func reserved(base string) bool {
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	return len(base) == 4 && (base[:3] == "COM" || base[:3] == "LPT") && base[3] >= '1' && base[3] <= '9'
}

// StorePath checks the path rules of
// docs/language.md#store-paths. Paths are portable relative
// paths, so a store dumped to disk can never escape its directory or hit a
// Windows device name.
func StorePath(p string) error {
	switch {
	case p == "":
		return pathErr(p, "path must not be empty")
	case len(p) > MaxPathBytes:
		return pathErr(p, fmt.Sprintf("path is %d bytes, longer than %d", len(p), MaxPathBytes))
	case p[0] == '/':
		return pathErr(p, "path must be relative (no leading /)")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7F {
			return pathErr(p, "path contains a control byte")
		} else if c == '\\' {
			return pathErr(p, "path contains a backslash; use / between segments")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return pathErr(p, "path has an empty segment (// or a trailing /)")
		case seg == "." || seg == "..":
			return pathErr(p, "path has a . or .. segment")
		case len(seg) > MaxSegmentBytes:
			return pathErr(p, fmt.Sprintf("segment %.20q... is %d bytes, longer than %d; use a shorter name or more directories", seg, len(seg), MaxSegmentBytes))
		case strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " "):
			return pathErr(p, fmt.Sprintf("segment %q ends in a dot or a space", seg))
		}
		base, _, _ := strings.Cut(seg, ".")
		if reserved(strings.ToUpper(base)) {
			return pathErr(p, fmt.Sprintf("segment %q uses the reserved device name %s", seg, strings.ToUpper(base)))
		}
	}
	return nil
}

func patErr(p, reason string) error {
	return fmt.Errorf("invalid glob pattern %q: %s", p, reason)
}

// token kinds of a compiled glob.
const (
	tLit       = iota
	tStar      // * : any run without '/'
	tDStarDir  // **/ : empty, or any run ending in '/'
	tDStarRest // final ** : anything
)

type token struct {
	kind int
	c    byte
}

// Glob is a compiled glob pattern.
type Glob struct{ toks []token }

// CompileGlob checks the glob syntax of
// docs/language.md#store-globs and compiles the pattern.
func CompileGlob(p string) (*Glob, error) {
	switch {
	case p == "":
		return nil, patErr(p, "pattern must not be empty")
	case len(p) > MaxPathBytes:
		return nil, patErr(p, fmt.Sprintf("pattern is %d bytes, longer than %d", len(p), MaxPathBytes))
	case strings.Contains(p, "***"):
		return nil, patErr(p, "pattern has a run of three or more *")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7F {
			return nil, patErr(p, "pattern contains a control byte")
		} else if c == '\\' {
			return nil, patErr(p, "pattern contains a backslash")
		}
	}
	segs := strings.Split(p, "/")
	g := &Glob{}
	for i, seg := range segs {
		last := i == len(segs)-1
		if strings.Contains(seg, "**") {
			if seg != "**" {
				return nil, patErr(p, "** must be a whole segment")
			}
			if last {
				g.toks = append(g.toks, token{kind: tDStarRest})
			} else {
				g.toks = append(g.toks, token{kind: tDStarDir})
			}
			continue
		}
		for j := 0; j < len(seg); j++ {
			if seg[j] == '*' {
				g.toks = append(g.toks, token{kind: tStar})
			} else {
				g.toks = append(g.toks, token{kind: tLit, c: seg[j]})
			}
		}
		if !last {
			g.toks = append(g.toks, token{kind: tLit, c: '/'})
		}
	}
	return g, nil
}

// Match reports whether the whole path matches. It simulates the pattern
// as an NFA over sets of positions: O(len(path)·len(pattern)), never
// backtracking. at[i] means "at the start of token i"; in[i] means "inside
// the **/ token i after at least one byte, waiting for its closing /".
func (g *Glob) Match(path string) bool {
	n := len(g.toks)
	at, in := make([]bool, n+1), make([]bool, n+1)
	nat, nin := make([]bool, n+1), make([]bool, n+1)
	closure := func(set []bool) {
		for i := 0; i < n; i++ {
			if set[i] && g.toks[i].kind != tLit {
				set[i+1] = true
			}
		}
	}
	at[0] = true
	closure(at)
	for k := 0; k < len(path); k++ {
		c := path[k]
		for i := range nat {
			nat[i], nin[i] = false, false
		}
		live := false
		for i := 0; i < n; i++ {
			if in[i] {
				nin[i] = true
				live = true
				if c == '/' {
					nat[i+1] = true
				}
			}
			if !at[i] {
				continue
			}
			switch t := g.toks[i]; t.kind {
			case tLit:
				if t.c == c {
					nat[i+1] = true
					live = true
				}
			case tStar:
				if c != '/' {
					nat[i] = true
					live = true
				}
			case tDStarDir:
				nin[i] = true
				live = true
				if c == '/' {
					nat[i+1] = true
				}
			case tDStarRest:
				nat[i] = true
				live = true
			}
		}
		if !live {
			return false
		}
		closure(nat)
		at, nat = nat, at
		in, nin = nin, in
	}
	return at[n]
}
