package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/session"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// Entry is one prompt of the catalog: healthy (Source set, Problem empty)
// or broken (Problem says what stops it running).
type Entry struct {
	Name, Description string
	// Path is the prompt file.
	Path string
	// Source is the file's text, nil for an unreadable file.
	Source []byte
	// Problem is why the prompt cannot run; empty when it can.
	Problem string
	// Input and Output are the frontmatter's declared store files.
	Input, Output *parse.IOSpec
}

// Catalog is one resolved generation of prompts, sorted by name, with the
// capability index need_prompt searches. It is never changed after
// Resolve; a reload builds a new one.
type Catalog struct {
	Entries []*Entry
	picker  *toolrule.Picker
	// indexed are the entries the picker indexes, in its order.
	indexed []*Entry
}

// Limits of catalog resolution.
const (
	maxCatalogFiles = 10000
)

// Resolve builds the catalog cfg describes. With retain, a broken prompt
// stays listed with its problem; without it (at start-up) any broken
// prompt is an error naming every fault. Faults that belong to the
// configuration (no prompt at all, a [prompts.NAME] block that matches
// nothing, two prompts with one name) are errors either way.
func Resolve(cfg *Config, retain bool) (*Catalog, error) {
	root := cfg.Prompts
	var faults []string
	files, err := globFiles(cfg)
	if err != nil {
		return nil, err
	}
	var entries []*Entry
	for _, p := range files {
		e := admit(p, "")
		if e == nil {
			continue
		}
		entries = append(entries, e)
	}
	disabled := map[string]bool{}
	for _, key := range sortedKeys(cfg.Blocks) {
		b := cfg.Blocks[key]
		if !b.Enabled {
			disabled[key] = true
		}
		if b.File == "" {
			if !b.Enabled {
				continue
			}
			found := false
			for _, e := range entries {
				found = found || e.Name == key
			}
			if !found {
				faults = append(faults, fmt.Sprintf("[prompts.%s] matches no prompt: it names no file and no glob found it", key))
			}
			continue
		}
		if !b.Enabled {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(b.File))
		e := admit(p, key)
		if e == nil {
			e = &Entry{Name: key, Path: p, Problem: "is not a promptforge prompt: no `promptforge: 1` in its frontmatter"}
		}
		replaced := false
		for i, held := range entries {
			if sameFile(held.Path, p) {
				entries[i], replaced = e, true
			}
		}
		if !replaced {
			entries = append(entries, e)
		}
	}
	kept := entries[:0]
	for _, e := range entries {
		if !disabled[e.Name] {
			kept = append(kept, e)
		}
	}
	entries = kept
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].Name != entries[j].Name {
			return entries[i].Name < entries[j].Name
		}
		return entries[i].Path < entries[j].Path
	})
	byName := map[string][]*Entry{}
	for _, e := range entries {
		if e.Problem == "" {
			byName[e.Name] = append(byName[e.Name], e)
		}
	}
	for _, n := range sortedKeys(byName) {
		if es := byName[n]; len(es) > 1 {
			var paths []string
			for _, e := range es {
				paths = append(paths, rel(root, e.Path))
			}
			faults = append(faults, fmt.Sprintf("prompt %q is declared by %d files: %s; rename one", n, len(es), strings.Join(paths, ", ")))
		}
	}
	if !retain {
		for _, e := range entries {
			if e.Problem != "" {
				faults = append(faults, fmt.Sprintf("%s (%s): %s", rel(root, e.Path), e.Name, e.Problem))
			}
		}
	}
	if len(entries) == 0 {
		faults = append(faults, fmt.Sprintf("no prompts resolved under %s; check [paths] prompts, [catalog] include and [prompts.NAME]", root))
	}
	if len(faults) > 0 {
		return nil, &CatalogError{Faults: faults}
	}
	return newCatalog(entries), nil
}

// CatalogError lists every fault that stops a catalog from resolving.
type CatalogError struct{ Faults []string }

func (e *CatalogError) Error() string {
	return "the prompt catalog does not resolve:\n  " + strings.Join(e.Faults, "\n  ")
}

func newCatalog(entries []*Entry) *Catalog {
	c := &Catalog{Entries: entries}
	var ix []toolrule.Entry
	for _, e := range entries {
		if e.Problem != "" {
			continue
		}
		c.indexed = append(c.indexed, e)
		ix = append(ix, toolrule.Entry{ID: toolrule.ID{Server: "prompts", Name: e.Name}, Name: e.Name, Description: e.Description})
	}
	c.picker = toolrule.NewPicker(ix, toolrule.DefaultPickerConfig())
	return c
}

// Closest ranks the healthy prompts against a capability description with
// the engine's capability picker (the one tools.bind uses) and returns up
// to n, best first; prompts that share no word with it are left out.
func (c *Catalog) Closest(capability string, n int) []*Entry {
	var out []*Entry
	for _, cand := range c.picker.Closest(capability, n) {
		for _, e := range c.indexed {
			if e.Name == cand.ID.Name {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// Lookup finds a prompt by name, folding case and '-' to '_'.
func (c *Catalog) Lookup(name string) *Entry {
	want := normalizeName(name)
	var broken *Entry
	for _, e := range c.Entries {
		if normalizeName(e.Name) == want {
			if e.Problem == "" {
				return e
			}
			broken = e
		}
	}
	return broken
}

// Nearest lists every prompt name, nearest to name first (edit distance,
// ties by name).
func (c *Catalog) Nearest(name string) []string {
	want := normalizeName(name)
	type ranked struct {
		d    int
		name string
	}
	seen := map[string]bool{}
	var rs []ranked
	for _, e := range c.Entries {
		if seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		rs = append(rs, ranked{levenshtein.ComputeDistance(normalizeName(e.Name), want), e.Name})
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].d != rs[j].d {
			return rs[i].d < rs[j].d
		}
		return rs[i].name < rs[j].name
	})
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.name
	}
	return out
}

func normalizeName(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}

// admit reads and parses one file. It returns nil for a file that is not
// a prompt at all (no promptforge key: a glob names a folder, not a
// catalog). block is the [prompts.NAME] key that named the file, if any.
func admit(path, block string) *Entry {
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	fallback := stem
	if block != "" {
		fallback = block
	}
	src, err := readPrompt(path)
	if err != nil {
		return &Entry{Name: fallback, Path: path, Problem: err.Error()}
	}
	if _, ok := parse.Probe(src); !ok {
		if block == "" && !malformedCandidate(src) {
			return nil
		}
		return &Entry{Name: fallback, Path: path, Problem: (&session.NotAPromptError{Path: path}).Error()}
	}
	p := parse.Parse(path, src)
	e := &Entry{Path: path, Source: src}
	if fm := p.Frontmatter; fm != nil {
		e.Name, e.Description, e.Input, e.Output = fm.Name, fm.Description, fm.Input, fm.Output
	}
	switch {
	case !promptNameRE().MatchString(e.Name):
		e.Problem = fmt.Sprintf("name %q is not ^[a-z][a-z0-9_]{0,47}$ (see docs/codes.md#frontmatter-name)", e.Name)
		e.Name = fallback
	case isReserved(e.Name):
		e.Problem = fmt.Sprintf("name %q is reserved: a built-in tool already answers to it", e.Name)
		e.Name = fallback + "_prompt"
	case block != "" && e.Name != block:
		e.Problem = fmt.Sprintf("frontmatter name %q does not match its [prompts.%s] block", e.Name, block)
		e.Name = block
	}
	if pe := session.ParseErrors(path, p); pe != nil && e.Problem == "" {
		e.Problem = pe.Error()
	}
	if e.Problem != "" {
		e.Source = nil
	}
	return e
}

// malformedCandidate reports whether src opens a frontmatter that names
// promptforge but does not parse: an attempt at a prompt, listed broken
// rather than skipped.
func malformedCandidate(src []byte) bool {
	lines := strings.Split(strings.TrimPrefix(string(src), "\ufeff"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return false
	}
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "---" {
			return false
		}
		if strings.HasPrefix(strings.TrimSpace(l), "promptforge") {
			return true
		}
	}
	return false
}

// readPrompt reads a prompt file through the one reader for repository
// files (regular files only, the prompt size cap).
func readPrompt(path string) ([]byte, error) {
	b, err := fsread.ReadFile(path, fsread.Prompt)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("the file does not exist")
	}
	return b, err
}

// globFiles walks the prompts folder and returns the files an include
// pattern matches and no exclude pattern does. Symbolic links that lead
// out of the folder are dropped.
func globFiles(cfg *Config) ([]string, error) {
	if len(cfg.Include) == 0 {
		return nil, nil
	}
	inc, err := compileGlobs(cfg.Include)
	if err != nil {
		return nil, err
	}
	exc, err := compileGlobs(cfg.Exclude)
	if err != nil {
		return nil, err
	}
	root := cfg.Prompts
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("[paths] prompts %s: %v", root, err)
	}
	var out []string
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			return skipDir(p, root)
		}
		if n++; n > maxCatalogFiles {
			return fmt.Errorf("[paths] prompts %s holds over %d files; point it at the prompts folder", root, maxCatalogFiles)
		}
		r := filepath.ToSlash(rel(root, p))
		if !matchAny(inc, r) || matchAny(exc, r) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || !within(realRoot, real) {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// skipDir leaves out .git and node_modules below the prompts folder:
// they hold no prompts and can hold many files.
func skipDir(p, root string) error {
	if p != root {
		if b := filepath.Base(p); b == ".git" || b == "node_modules" {
			return filepath.SkipDir
		}
	}
	return nil
}

func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func compileGlobs(pats []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range pats {
		re, err := compileGlob(p)
		if err != nil {
			return nil, fmt.Errorf("[catalog] pattern %q: %v", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// compileGlob turns a catalog glob into a regular expression over
// slash-separated relative paths: `*` and `?` stay within one path
// segment, `**` crosses segments (`**/` also matches no folder at all),
// `[...]` is a character class (`[!...]` negated).
func compileGlob(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '*' && i+1 < len(p) && p[i+1] == '*':
			i++
			if i+1 < len(p) && p[i+1] == '/' {
				i++
				b.WriteString("(?:.*/)?")
			} else {
				b.WriteString(".*")
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(p[i+1:], ']')
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			class := p[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += 1 + end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
