package chunkmemo

import (
	"math"
	"sync"

	"github.com/forge-lsp/forge-lsp/analysis"
	"github.com/forge-lsp/forge-lsp/engine/parse"
	"github.com/forge-lsp/forge-lsp/engine/source"
)

// A pass that judges the parts of a 10,000-line prompt one by one
// confirms, after a keystroke, that about a thousand of them did not
// change: for each it found the chunk's table, its entry, and compared
// the part's text and margins with the entry's, scattered reads that
// cost more than the few parts judged again. A Run keeps instead, for
// the next analysis of the same document, the list of the parts it
// judged or found, in order, with their positions, tables, fingerprints
// and findings (one list per key and document, patched in place: see
// keep). The document's lineage (parse.Lineage) tells which
// bytes the next version shares with this one (the text before and
// after the edits); a part whose region lies in them, at the same place
// (the same offset before the edits, the same distance from the end
// after them) with the same table and fingerprint, has the findings its
// record holds. Its text is then never read: one comparison of a few
// words of a record read in order. Any other part is looked up in its
// chunk's table, as Findings does.

// Run is one analysis's judgement of a pass's parts of one kind (one
// key): Start it, judge every part through it (Findings, Report,
// ReportIf) in file order, and call Done.
type Run[F comparable] struct {
	ix  *Index
	key Key
	// old is the record the previous run of the key on the document
	// left (nil: none), usable when its version's bytes are known:
	// the first before bytes of this version are its, and the last
	// after; delta is this version's size less its.
	old                  *records[F]
	usable               bool
	before, after, delta int
	size                 int
	// cur is the first of old's parts the run has not passed: the parts
	// before it are never read again, and the new list is written over
	// them (keep).
	cur int
	// next is this run's record (nil: none is kept); its parts are
	// old's list until a new part would overwrite an old one still to
	// be read, then a copy.
	next *records[F]
}

// records are the parts one run found or judged, in order, and the
// version of the document it judged.
type records[F comparable] struct {
	version uint64
	size    int
	parts   []record[F]
}

// record is one part: its table and fingerprint, its region (and core,
// relative to the region's start; zero for the whole region) in its
// version, and its findings, relative to the region's start (its memo
// entry's; nil for none).
type record[F comparable] struct {
	table              *Table
	fp                 F
	start, end         int32
	coreStart, coreEnd int32
	diags              *[]analysis.Diagnostic
}

// lineageRuns holds, on a document's lineage, the records of the last
// run of each key.
type lineageRuns struct {
	mu    sync.Mutex
	slots [maxKeys]any
}

type runsKey struct{}

// runsOf returns l's runs.
func runsOf(l *parse.Lineage) *lineageRuns {
	if r, ok := l.Memo(runsKey{}).(*lineageRuns); ok {
		return r
	}
	return l.SetMemo(runsKey{}, &lineageRuns{}).(*lineageRuns)
}

// take removes and returns the records of slot's last run (nil: none,
// or a concurrent run of the same key holds them).
func (r *lineageRuns) take(slot int) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.slots[slot]
	r.slots[slot] = nil
	return v
}

func (r *lineageRuns) put(slot int, v any) {
	r.mu.Lock()
	r.slots[slot] = v
	r.mu.Unlock()
}

// Start starts a run of key's parts in ix's analysis.
func Start[F comparable](ix *Index, key Key) *Run[F] {
	r := &Run[F]{ix: ix, key: key}
	if ix.runs == nil || ix.version == 0 {
		// No memo (Once), no lineage, or a document's first version,
		// which may have no next (a parse without Reuse): the parts
		// are found in their chunks' tables, and a record is kept from
		// the first edit on.
		return r
	}
	size := len(ix.prog.Prompt.File.Content)
	if size >= math.MaxInt32 {
		return r
	}
	r.size = size
	r.next = &records[F]{version: ix.version, size: size}
	if old, ok := ix.runs.take(key.slot).(*records[F]); ok {
		r.old = old
		r.next.parts = old.parts[:0]
		if b, a, ok := ix.lineage.Same(old.version, ix.version); ok {
			r.usable = true
			r.before, r.after, r.delta = min(b, size, old.size), min(a, size, old.size), size-old.size
		} else {
			r.cur = len(old.parts) // nothing of it is read
		}
	}
	return r
}

// Done keeps the run's record for the next analysis of the document.
func (r *Run[F]) Done() {
	if r.next == nil {
		return
	}
	if r.old != nil {
		if n := len(r.next.parts); n < len(r.old.parts) && &r.next.parts[:1][0] == &r.old.parts[0] {
			clear(r.old.parts[n:]) // what is left of the old list
		}
	}
	r.ix.runs.put(r.key.slot, r.next)
	r.old, r.next = nil, nil
}

// Findings is the package's Findings for a part of the run.
func (r *Run[F]) Findings(p Part[F], judge func(report func(analysis.Diagnostic))) []analysis.Diagnostic {
	return r.findings(&p, func(report func(analysis.Diagnostic)) bool {
		judge(report)
		return true
	})
}

// Report is the package's Report for a part of the run.
func (r *Run[F]) Report(pass *analysis.Pass, p Part[F], judge func()) {
	report := pass.Report
	for _, d := range r.findings(&p, func(memo func(analysis.Diagnostic)) bool {
		pass.Report = memo
		defer func() { pass.Report = report }()
		judge()
		return true
	}) {
		report(d)
	}
}

// ReportIf is the package's ReportIf for a part of the run.
func (r *Run[F]) ReportIf(pass *analysis.Pass, p Part[F], judge func() bool) {
	report := pass.Report
	for _, d := range r.findings(&p, func(memo func(analysis.Diagnostic)) bool {
		pass.Report = memo
		defer func() { pass.Report = report }()
		return judge()
	}) {
		report(d)
	}
}

func (r *Run[F]) findings(p *Part[F], judge func(report func(analysis.Diagnostic)) bool) []analysis.Diagnostic {
	if p.Table != nil && r.usable {
		if old := r.find(p); old != nil {
			diags := old.diags // keep may write over old
			r.keep(p, diags)
			if diags == nil {
				return nil
			}
			return rebase(*diags, p.Region.Start)
		}
	}
	diags, rel, kept := findings(r.key, p, judge)
	if kept && r.next != nil {
		r.keep(p, rel)
	}
	return diags
}

// keep adds part p, with findings rel, to the run's record. The list is
// written over the previous run's where that was read: every part
// before cur, and any part no part of this version can be found as
// (dead). Where the new list would overtake the old one (a part was
// added before parts still to be found), the rest goes to a copy.
func (r *Run[F]) keep(p *Part[F], rel *[]analysis.Diagnostic) {
	if r.next == nil {
		return
	}
	parts := r.next.parts
	if r.old != nil && len(parts) < len(r.old.parts) {
		olds := r.old.parts
		for r.cur < len(olds) && r.cur <= len(parts) && r.dead(&olds[r.cur]) {
			r.cur++
		}
		if len(parts) >= r.cur && len(parts) < cap(parts) && &parts[:1][0] == &olds[0] {
			// The next slot holds an old part still to be read.
			parts = append(make([]record[F], 0, len(olds)+len(olds)/8+1), parts...)
		}
	}
	cs, ce := coreOf(p)
	r.next.parts = append(parts, record[F]{table: p.Table, fp: p.FP,
		start: int32(p.Region.Start), end: int32(p.Region.End), coreStart: cs, coreEnd: ce, diags: rel})
}

// dead reports whether no part of this version can be found as the old
// part o: its region is not among the bytes the versions share.
func (r *Run[F]) dead(o *record[F]) bool {
	if !r.usable {
		return true
	}
	oldSize := r.size - r.delta
	return int(o.end) > r.before && int(o.start) < oldSize-r.after
}

// coreOf returns p's core relative to its region's start (zero for the
// whole region).
func coreOf[F comparable](p *Part[F]) (int32, int32) {
	if p.Core == (source.Span{}) {
		return 0, 0
	}
	return int32(p.Core.Start - p.Region.Start), int32(p.Core.End - p.Region.Start)
}

// find returns the previous run's record of part p: the part at the
// same place in bytes this version shares with the previous run's,
// with the same table, fingerprint and core; nil when there is none.
func (r *Run[F]) find(p *Part[F]) *record[F] {
	var shift int
	switch {
	case p.Region.End <= r.before:
	case p.Region.Start >= r.size-r.after:
		shift = r.delta
	default:
		return nil // the part's bytes may have changed
	}
	// The old parts are read forward only (the parts come in file
	// order): those before cur may hold new ones.
	start := int32(p.Region.Start - shift)
	parts := r.old.parts
	i := r.cur
	for i < len(parts) && parts[i].start < start {
		i++
	}
	r.cur = i
	if i == len(parts) {
		return nil
	}
	o := &parts[i]
	if o.start != start {
		return nil
	}
	r.cur = i + 1 // no later part starts there
	cs, ce := coreOf(p)
	if o.end != int32(p.Region.End-shift) || o.coreStart != cs || o.coreEnd != ce || o.table != p.Table || o.fp != p.FP {
		return nil
	}
	return o
}
