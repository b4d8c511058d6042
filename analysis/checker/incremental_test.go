package checker_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/analysis/analysistest"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
	"github.com/forge-lsp/forge-lsp/analysis/program"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/parse/parsetest"
	"github.com/forge-lsp/forge-lsp/engine/testflag"
)

// TestIncrementalMatchesCold checks the memoised per-chunk models
// (analysis/program) against fresh builds: every analyzer testdata file is
// analysed, then edited (each line deleted in turn, a paragraph inserted
// after the H1 heading, CRLF line breaks) and analysed again with the
// memos of the original in place. The findings and the whole program
// model must be exactly what a build with empty caches gives.
func TestIncrementalMatchesCold(t *testing.T) {
	files := analysistest.Corpus(t)
	edits := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		orig := string(b)
		variants := parsetest.EditVariants(orig)
		if !testflag.Long() {
			// Every fourth line deleted, and always the inserted
			// paragraph and the CRLF line breaks (the last two), which
			// move every chunk or change where its lines start.
			n := max(len(variants)-2, 0)
			variants = append(parsetest.EveryNth(variants[:n], 4), variants[n:]...)
		}
		// Cold results first, each from empty caches.
		cold := make([][2]string, len(variants))
		for i, v := range variants {
			parse.ResetCache()
			cold[i][0], cold[i][1] = analyse(f, v)
		}
		parse.ResetCache()
		origDiags, _ := analyse(f, orig)
		// Then each variant after the original: after the first round
		// that analysis is all cache hits, and it keeps the original's
		// memos in the current generation.
		parse.ResetCache()
		for i, v := range variants {
			wantDiags, wantProg := cold[i][0], cold[i][1]
			// The original's parse stays alive while the variant is
			// analysed, as an editor keeps the previous version's: its
			// program is then the one the variant's build starts from
			// (program.Build takes from the last build of the file).
			prev := parse.Parse(f, []byte(orig))
			checker.Check(prev, nil)
			gotDiags, gotProg := analyse(f, v)
			runtime.KeepAlive(prev)
			if gotDiags != wantDiags {
				t.Errorf("%s: edited text %q:\nwarm findings:\n%s\ncold findings:\n%s", f, firstDiff(orig, v), gotDiags, wantDiags)
			}
			if gotProg != wantProg {
				t.Errorf("%s: edited text %q:\nwarm model:\n%s\ncold model:\n%s", f, firstDiff(orig, v), gotProg, wantProg)
			}
			// The same edit as an editor makes it (parse.ParseEdited
			// after the original's parse, which its analysis saw), and
			// back: the passes find the parts of the previous analysis by
			// position (chunkmemo.Run).
			po := parse.Parse(f, []byte(orig))
			po = parse.ParseEdited(po.Reuse(), changeOf(orig, orig), f, []byte(orig)) // a document's first version keeps no record
			analysePrompt(po)
			pv := parse.ParseEdited(po.Reuse(), changeOf(orig, v), f, []byte(v))
			if got, _ := analysePrompt(pv); got != wantDiags {
				t.Errorf("%s: edited text %q after the original's analysis:\nwarm findings:\n%s\ncold findings:\n%s", f, firstDiff(orig, v), got, wantDiags)
			}
			pb := parse.ParseEdited(pv.Reuse(), changeOf(v, orig), f, []byte(orig))
			if got, _ := analysePrompt(pb); got != origDiags {
				t.Errorf("%s: original text after the edit %q:\nwarm findings:\n%s\ncold findings:\n%s", f, firstDiff(orig, v), got, origDiags)
			}
			edits++
		}
	}
	t.Logf("%d files, %d edits", len(files), edits)
}

func analyse(name, text string) (diags, prog string) {
	return analysePrompt(parse.Parse(name, []byte(text)))
}

// changeOf returns what differs between two texts as a parse.Change:
// their common prefix and suffix.
func changeOf(old, text string) parse.Change {
	n := min(len(old), len(text))
	p := 0
	for p < n && old[p] == text[p] {
		p++
	}
	q := 0
	for q < n-p && old[len(old)-1-q] == text[len(text)-1-q] {
		q++
	}
	return parse.Change{Before: p, After: q}
}

func analysePrompt(p *parse.Prompt) (diags, prog string) {
	var b strings.Builder
	for _, d := range checker.Check(p, nil) {
		fmt.Fprintf(&b, "%s %v %s %q\n", d.Code, d.Span, d.Message, p.File.Text(d.Span))
		for _, fx := range d.SuggestedFixes {
			for _, e := range fx.Edits {
				fmt.Fprintf(&b, "  fix %s %v %q\n", fx.Message, e.Span, e.NewText)
			}
		}
	}
	// The model the checker used (built from the last build of the
	// file when there is one), then one built again from the memos alone.
	return b.String(), dumpProgram(program.Of(p)) + "rebuilt:\n" + dumpProgram(program.Build(p))
}

// dumpProgram prints the model with absolute positions.
func dumpProgram(p *program.Program) string {
	var b strings.Builder
	f := p.Prompt.File
	for _, c := range p.Calls {
		h := ""
		if p.HandlerOf(c) != nil {
			h = fmt.Sprint(p.NameSpan(p.HandlerOf(c)))
		}
		fmt.Fprintf(&b, "call %s %v %v %v in=%v where=%v handler=%s %q\n", c.Path, p.NameSpan(c), p.CallSpan(c), p.ChunkOf(c).Span, c.InFunc, c.Where, h, f.Text(p.CallSpan(c)))
		for i := range c.Expr.Args {
			if s, _, ok := p.StringArg(c, i); ok {
				fmt.Fprintf(&b, "  arg %d %q %v\n", i, s, p.SpanOf(c, c.Arg(i)))
			}
		}
	}
	for _, g := range p.Globals {
		fmt.Fprintf(&b, "global %s %v %s %v write=%v field=%v in=%v where=%v handler=%v\n", g.Expr.Value, p.GlobalSpan(g), g.Path, p.PathSpan(g), g.Write, g.FieldWrite, g.InFunc, g.Where, p.HandlerOf(g) != nil)
	}
	for _, l := range p.Locals {
		fmt.Fprintf(&b, "local %s %v param=%v reads=%d\n", l.Name, p.LocalSpan(l), l.Param, l.Reads)
	}
	for _, k := range p.CallsKeys {
		fmt.Fprintf(&b, "callskey %s %v\n", k.Key.Value, p.Span(k.Chunk, k.Key))
	}
	for _, u := range p.Unreachable {
		fmt.Fprintf(&b, "unreachable %v after %v\n", p.Span(u.Chunk, u.Stmt), p.Span(u.Chunk, u.After))
	}
	for _, u := range p.Sections {
		fmt.Fprintf(&b, "unit %s calls=%d writes=%v\n", u.Section.Name, len(u.Calls), slices.Sorted(maps.Keys(u.GlobalWrites)))
	}
	return b.String()
}

func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	end := i + 40
	if end > len(b) {
		end = len(b)
	}
	return b[i:end]
}

// FuzzIncremental: analysing a text after another (warm memos, regions
// and chunks of the first) gives exactly what analysing it with empty
// caches gives. The edit replaces bytes [at, at+del) of the first text
// with ins.
func FuzzIncremental(f *testing.F) {
	seeds, _ := filepath.Glob("../passes/*/testdata/*.md")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(string(b), uint16(len(b)/2), uint8(1), "\n")
			f.Add(string(b), uint16(len(b)/3), uint8(0), "x = 1\n")
		}
	}
	f.Fuzz(func(t *testing.T, text string, at uint16, del uint8, ins string) {
		a := min(int(at), len(text))
		b := min(a+int(del), len(text))
		edited := text[:a] + ins + text[b:]
		parse.ResetCache()
		wantDiags, wantProg := analyse("f.md", edited)
		parse.ResetCache()
		analyse("f.md", text)
		gotDiags, gotProg := analyse("f.md", edited)
		if gotDiags != wantDiags || gotProg != wantProg {
			t.Fatalf("warm and cold analyses differ for %q:\nwarm:\n%s%s\ncold:\n%s%s", edited, gotDiags, gotProg, wantDiags, wantProg)
		}
	})
}
