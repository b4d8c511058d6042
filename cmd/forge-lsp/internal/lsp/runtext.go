package lsp

import (
	"strings"

	"github.com/forge-lsp/forge-lsp/engine/run"
)

// The Run output shows a model's answer while it is written: the runner
// is a run.TextObserver, so the engine asks the gateway to stream, and
// each completed line of the answer goes to the transcript as it arrives
// instead of the whole answer after the round.

// roundKey names one model round of one section entry.
type roundKey struct {
	section int64
	round   int
}

// streamed is the part of a round's answer not yet shown: the text after
// its last line break.
type streamed struct{ partial strings.Builder }

// StreamsText implements run.TextObserver.
func (r *runner) StreamsText() bool { return true }

// ModelText shows the completed lines of a piece of a round's answer; the
// first piece opens the round in the transcript with its prompt.
func (r *runner) ModelText(ev run.ModelTextEvent) {
	k := roundKey{ev.SectionID, ev.Round}
	r.mu.Lock()
	if r.streams == nil {
		r.streams = map[roundKey]*streamed{}
	}
	st := r.streams[k]
	first := st == nil
	if first {
		st = &streamed{}
		r.streams[k] = st
	}
	st.partial.WriteString(ev.Text)
	buf := st.partial.String()
	cut := strings.LastIndexByte(buf, '\n')
	var lines string
	if cut >= 0 {
		lines = buf[:cut]
		st.partial.Reset()
		st.partial.WriteString(buf[cut+1:])
	}
	r.mu.Unlock()
	if first {
		r.transcript("model round %d in %s (%s), streaming\n>>> %s\n<<<", ev.Round, ev.Section, ev.Model, clip(ev.Prompt, 4000))
	}
	if cut >= 0 {
		r.transcript("%s", lines)
	}
}

// endStream shows the rest of a streamed round's answer and reports
// whether the round was streamed (its answer is in the transcript).
func (r *runner) endStream(ev run.ModelRoundEvent) bool {
	k := roundKey{ev.SectionID, ev.Round}
	r.mu.Lock()
	st := r.streams[k]
	delete(r.streams, k)
	r.mu.Unlock()
	if st == nil {
		return false
	}
	if rest := st.partial.String(); rest != "" {
		r.transcript("%s", rest)
	}
	return true
}
