package toolrule

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// ID is a tool's stable identity: the server that provides it plus its
// name on that server.
type ID struct {
	Server, Name string
}

// String renders the id as server/name.
func (id ID) String() string { return id.Server + "/" + id.Name }

// Entry is one catalog item the picker can resolve to: a tool, or a model
// (whose Name is the fixed label "model" and which has no parameters).
type Entry struct {
	ID          ID
	Name        string
	Description string
	Params      []string
	Hints       Hints
}

// Hints are optional MCP-style annotations used only to break score ties.
type Hints struct {
	ReadOnly, Destructive, Idempotent *bool
}

// PickerConfig holds the picker's thresholds. All lie in [0,1]; floor and
// threshold tests are inclusive, the margin test is strict (docs/language.md#capability-resolution).
type PickerConfig struct {
	// SimilarityFloor: a leader scoring at least this binds unless tied.
	SimilarityFloor float64
	// SoloFloor: a leader below SimilarityFloor still binds when it scores
	// at least this and no runner-up does.
	SoloFloor float64
	// Margin: candidates within this of the leader (and above the floor)
	// make the result Ambiguous.
	Margin float64
	// DuplicateThreshold: same-server candidates at least this similar to
	// the leader (tool to tool) make the result Duplicate.
	DuplicateThreshold float64
	// TopK sizes the window, W = max(TopK, 2).
	TopK int
}

// DefaultPickerConfig returns the lexical defaults. Upstream's numbers
// (0.825/0.5/0.05/0.98) were tuned for sentence embeddings, whose cosines
// sit high and close together; TF-IDF cosines between a short capability
// phrase and a tool's enriched text sit lower and spread wider. The values
// were calibrated on the fixture catalog of fixture_test.go with
// TestPickerCalibration, which lists every phrase, the outcome it must
// give and the scores that justify each number:
//   - SimilarityFloor 0.30: every intended match scores >= 0.51, the best
//     unintended leader 0.20.
//   - SoloFloor 0.10: a phrase that shares one distinctive word with a
//     single tool ("schedule a meeting on the calendar" -> create_event at
//     0.11, every other tool 0) still binds; phrases with no shared word
//     score exactly 0.
//   - Margin 0.14: lexical gaps are wider than embedding gaps. "file"
//     (read_file 0.56 vs write_file 0.45) and "look up a record" (0.45 vs
//     0.31) are genuinely ambiguous; "web search capability" (web_search
//     0.56 vs web_fetch 0.40, gap 0.157) must bind.
//   - DuplicateThreshold 0.80: a tool and its reworded copy on one server
//     score 0.90 tool-to-tool; the closest distinct pair (read_file,
//     write_file) 0.39.
func DefaultPickerConfig() PickerConfig {
	return PickerConfig{SimilarityFloor: 0.30, SoloFloor: 0.10, Margin: 0.14, DuplicateThreshold: 0.80, TopK: 3}
}

// Outcome is a picker result.
type Outcome int

const (
	// Bind: exactly one tool matches.
	Bind Outcome = iota
	// Absent: nothing matches well enough.
	Absent
	// Duplicate: the leader has same-server twins.
	Duplicate
	// Ambiguous: several tools match about equally well.
	Ambiguous
	// Invalid: the capability text cannot be scored (blank).
	Invalid
)

func (o Outcome) String() string {
	return [...]string{"Bind", "Absent", "Duplicate", "Ambiguous", "BindQuery"}[o]
}

// Decision is the picker's answer for one capability text.
type Decision struct {
	Outcome Outcome
	// IDs: the bound id (Bind), or the candidates in picker order
	// (Duplicate, Ambiguous).
	IDs []ID
	// Scores parallel IDs.
	Scores []float64
}

// Err returns nil for Bind and otherwise the Binding error message for a
// capability need; what is "tool" or "model".
func (d Decision) Err(what, need string) error {
	ids := make([]string, len(d.IDs))
	for i, id := range d.IDs {
		ids[i] = id.String()
	}
	switch d.Outcome {
	case Bind:
		return nil
	case Absent:
		return fmt.Errorf("no %s matches capability %q", what, need)
	case Duplicate:
		return fmt.Errorf("duplicate %ss match capability %q: [%s]", what, need, strings.Join(ids, ", "))
	case Ambiguous:
		return fmt.Errorf("ambiguous %s capability %q matches several %ss about equally: [%s]; make the description more specific", what, need, what, strings.Join(ids, ", "))
	}
	return fmt.Errorf("cannot resolve %s capability %q: the description is blank", what, need)
}

// Picker resolves capability descriptions against a fixed catalog with a
// TF-IDF cosine scorer. Decisions are cached per exact description for the
// picker's lifetime (one run). Safe for concurrent use.
type Picker struct {
	cfg     PickerConfig
	entries []Entry
	idf     map[string]float64
	vecs    []vector

	mu    sync.Mutex
	cache map[string]Decision
}

type vector struct {
	w    map[string]float64
	norm float64
}

// NewPicker indexes entries (in catalog order).
func NewPicker(entries []Entry, cfg PickerConfig) *Picker {
	p := &Picker{cfg: cfg, entries: append([]Entry(nil), entries...), idf: map[string]float64{}, cache: map[string]Decision{}}
	docs := make([][]string, len(entries))
	df := map[string]int{}
	for i, e := range entries {
		docs[i] = Tokens(EnrichedText(e.Name, e.Description, e.Params))
		seen := map[string]bool{}
		for _, t := range docs[i] {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(entries))
	for t, d := range df {
		p.idf[t] = idf(n, float64(d))
		if len(entries) >= 2 && d == len(entries) {
			// A word every entry has cannot tell them apart: with its
			// full weight it gives every entry the same floor of score,
			// so that adding a second model to a catalog of one ("model.
			// ..." starts each model's text) made a runner-up reach the
			// solo floor and turned a clear leader Absent.
			p.idf[t] = sharedWeight
		}
	}
	for _, d := range docs {
		p.vecs = append(p.vecs, p.vectorize(d))
	}
	return p
}

// sharedWeight is the weight of a word every entry of a catalog of two or
// more uses (docs/language.md#capability-resolution): almost nothing, so
// that it does not decide, but not zero, so that a need made only of such
// words still shares a word with the entries (its candidates are listed).
const sharedWeight = 0.05

// idf is the smoothed inverse document frequency; a term the catalog never
// uses (df 0) gets the highest weight, so a need full of words no tool has
// scores low.
func idf(n, df float64) float64 { return math.Log((n+1)/(df+1)) + 1 }

func (p *Picker) vectorize(toks []string) vector {
	v := vector{w: map[string]float64{}}
	for _, t := range toks {
		w, ok := p.idf[t]
		if !ok {
			w = idf(float64(len(p.entries)), 0)
		}
		v.w[t] += w
	}
	for _, w := range v.w {
		v.norm += w * w
	}
	v.norm = math.Sqrt(v.norm)
	return v
}

func cosine(a, b vector) float64 {
	if a.norm == 0 || b.norm == 0 {
		return 0
	}
	if len(a.w) > len(b.w) {
		a, b = b, a
	}
	dot := 0.0
	for t, w := range a.w {
		dot += w * b.w[t]
	}
	return dot / (a.norm * b.norm)
}

// Score returns the need's score against every entry, in catalog order.
func (p *Picker) Score(need string) []float64 {
	q := p.vectorize(Tokens(need))
	out := make([]float64, len(p.vecs))
	for i, v := range p.vecs {
		out[i] = cosine(q, v)
	}
	return out
}

// Resolve runs the algorithm of
// docs/language.md#capability-resolution for need.
func (p *Picker) Resolve(need string) Decision {
	p.mu.Lock()
	if d, ok := p.cache[need]; ok {
		p.mu.Unlock()
		return d
	}
	p.mu.Unlock()
	d := p.resolve(need)
	p.mu.Lock()
	p.cache[need] = d
	p.mu.Unlock()
	return d
}

func (p *Picker) resolve(need string) Decision {
	if len(Tokens(need)) == 0 {
		if strings.TrimSpace(need) == "" {
			return Decision{Outcome: Invalid}
		}
		// Only stopwords: nothing can match.
		return Decision{Outcome: Absent}
	}
	scores := p.Score(need)
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
		if math.IsNaN(scores[i]) || math.IsInf(scores[i], 0) {
			scores[i] = math.Inf(-1)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	w := max(p.cfg.TopK, 2)
	if len(idx) > w {
		idx = idx[:w]
	}
	// A zero score shares no word with the need: never a candidate.
	for len(idx) > 0 && scores[idx[len(idx)-1]] <= 0 {
		idx = idx[:len(idx)-1]
	}
	sort.SliceStable(idx, func(a, b int) bool {
		sa, sb := scores[idx[a]], scores[idx[b]]
		if sa != sb {
			return sa > sb
		}
		ka, kb := hintKey(p.entries[idx[a]].Hints), hintKey(p.entries[idx[b]].Hints)
		if ka != kb {
			return ka < kb
		}
		return idx[a] < idx[b]
	})
	if len(idx) == 0 {
		return Decision{Outcome: Absent}
	}
	lead := idx[0]
	ls := scores[lead]
	if ls < p.cfg.SimilarityFloor {
		if ls >= p.cfg.SoloFloor && (len(idx) < 2 || scores[idx[1]] < p.cfg.SoloFloor) {
			return p.decision(Bind, []int{lead}, scores)
		}
		return Decision{Outcome: Absent}
	}
	twins := []int{lead}
	for _, i := range idx[1:] {
		if p.entries[i].ID.Server == p.entries[lead].ID.Server && cosine(p.vecs[lead], p.vecs[i]) >= p.cfg.DuplicateThreshold {
			twins = append(twins, i)
		}
	}
	if len(twins) >= 2 {
		return p.decision(Duplicate, twins, scores)
	}
	ties := []int{lead}
	for _, i := range idx[1:] {
		if scores[i] >= p.cfg.SimilarityFloor && ls-scores[i] < p.cfg.Margin {
			ties = append(ties, i)
			continue
		}
		break
	}
	if len(ties) < 2 {
		return p.decision(Bind, ties, scores)
	}
	return p.decision(Ambiguous, ties, scores)
}

func (p *Picker) decision(o Outcome, idx []int, scores []float64) Decision {
	d := Decision{Outcome: o}
	for _, i := range idx {
		d.IDs = append(d.IDs, p.entries[i].ID)
		d.Scores = append(d.Scores, scores[i])
	}
	return d
}

// ToolSimilarity is the tool-to-tool cosine of entries i and j (for the
// Duplicate outcome and diagnostics).
func (p *Picker) ToolSimilarity(i, j int) float64 { return cosine(p.vecs[i], p.vecs[j]) }

// hintKey orders readOnly==true, then destructive==false, then
// idempotent==true first (smaller is preferred).
func hintKey(h Hints) int {
	k := 0
	if h.ReadOnly == nil || !*h.ReadOnly {
		k += 4
	}
	if h.Destructive == nil || *h.Destructive {
		k += 2
	}
	if h.Idempotent == nil || !*h.Idempotent {
		k++
	}
	return k
}

// stopwords are dropped before scoring: function words plus words every
// capability phrase uses ("capability", "tool") that say nothing about
// which tool is meant. The set is built on first use.
var stopwords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or of to in on for from with by at as is are be it its this that these those
	into over via per any all some each can may will should would could do does
	capability capabilities tool tools ability able use using used uses thing things something
	return returns returning given get gets me my you your we our i
	parameters parameter`) {
		m[w] = true
	}
	return m
})

// Tokens lower-cases text, splits it on anything that is not a letter or
// digit, drops stopwords and strips common English suffixes so that
// "searches", "searching" and "search" meet.
func Tokens(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if stopwords()[f] {
			continue
		}
		out = append(out, stem(f))
	}
	return out
}

func stem(w string) string {
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		w = w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:len(w)-1]
	}
	return w
}

// ParamNames returns the sorted top-level "properties" keys of a schema.
func ParamNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// EnrichedText is the text the picker indexes for a tool:
// "<name with _ as space>. <description>. parameters: <p1>, <p2>", with
// empty parts dropped together with their separator (docs/language.md#capability-resolution).
func EnrichedText(name, description string, params []string) string {
	var parts []string
	if n := strings.ReplaceAll(name, "_", " "); n != "" {
		parts = append(parts, n)
	}
	if description != "" {
		parts = append(parts, description)
	}
	if len(params) > 0 {
		parts = append(parts, "parameters: "+strings.Join(params, ", "))
	}
	return strings.Join(parts, ". ")
}

// Candidate is one catalog entry with its score for a need.
type Candidate struct {
	ID    ID
	Score float64
}

// Closest returns up to n entries that share a word with need, best
// first (catalog order breaks ties), to explain an Absent decision.
func (p *Picker) Closest(need string, n int) []Candidate {
	scores := p.Score(need)
	idx := make([]int, 0, len(scores))
	for i, s := range scores {
		if s > 0 && !math.IsNaN(s) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	if len(idx) > n {
		idx = idx[:n]
	}
	out := make([]Candidate, len(idx))
	for k, i := range idx {
		out[k] = Candidate{ID: p.entries[i].ID, Score: scores[i]}
	}
	return out
}

// Entries returns the catalog the picker indexes, in catalog order.
func (p *Picker) Entries() []Entry { return append([]Entry(nil), p.entries...) }
