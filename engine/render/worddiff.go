package render

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// OpKind is what a word-diff operation does.
type OpKind int

// Word-diff operations.
const (
	Equal OpKind = iota
	Delete
	Insert
)

// Op is a run of words kept, deleted or inserted, joined by single spaces.
type Op struct {
	Kind OpKind
	Text string
}

// WordDiff compares a and b word by word (runs of non-space characters;
// whitespace changes are not differences).
func WordDiff(a, b string) []Op {
	wa, wb := strings.Fields(a), strings.Fields(b)
	m := difflib.NewMatcherWithJunk(wa, wb, false, nil)
	var ops []Op
	add := func(k OpKind, words []string) {
		if len(words) == 0 {
			return
		}
		if n := len(ops); n > 0 && ops[n-1].Kind == k {
			ops[n-1].Text += " " + strings.Join(words, " ")
			return
		}
		ops = append(ops, Op{Kind: k, Text: strings.Join(words, " ")})
	}
	for _, oc := range m.GetOpCodes() {
		switch oc.Tag {
		case 'e':
			add(Equal, wa[oc.I1:oc.I2])
		case 'd':
			add(Delete, wa[oc.I1:oc.I2])
		case 'i':
			add(Insert, wb[oc.J1:oc.J2])
		case 'r':
			add(Delete, wa[oc.I1:oc.I2])
			add(Insert, wb[oc.J1:oc.J2])
		}
	}
	return ops
}

// Changed reports whether ops hold a deletion or an insertion.
func Changed(ops []Op) bool {
	for _, op := range ops {
		if op.Kind != Equal {
			return true
		}
	}
	return false
}

// contextWords is how many unchanged words FormatWordDiff keeps on each
// side of a change.
const contextWords = 8

// FormatWordDiff prints the changes of ops as git's --word-diff=plain
// does ([-deleted-]{+inserted+}), with a few unchanged words around each
// change and "…" for the rest.
func FormatWordDiff(ops []Op) string {
	var sb strings.Builder
	for i, op := range ops {
		switch op.Kind {
		case Delete:
			sb.WriteString("[-" + op.Text + "-]")
		case Insert:
			sb.WriteString("{+" + op.Text + "+}")
		case Equal:
			w := strings.Fields(op.Text)
			first, last := i == 0, i == len(ops)-1
			var keep []string
			switch {
			case first && last:
				continue
			case first:
				keep = append([]string{"…"}, tail(w, contextWords)...)
			case last:
				keep = append(head(w, contextWords), "…")
			case len(w) > 2*contextWords:
				keep = append(append(head(w, contextWords), "…"), tail(w, contextWords)...)
			default:
				keep = w
			}
			if first && len(w) <= contextWords {
				keep = w
			}
			if last && len(w) <= contextWords {
				keep = w
			}
			sb.WriteString(" " + strings.Join(keep, " ") + " ")
		}
	}
	return strings.TrimSpace(sb.String())
}

func head(w []string, n int) []string {
	if len(w) > n {
		return w[:n]
	}
	return w
}

func tail(w []string, n int) []string {
	if len(w) > n {
		return w[len(w)-n:]
	}
	return w
}
