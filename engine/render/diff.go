package render

import (
	"fmt"
	"strings"
)

// File statuses of a FileDiff.
const (
	Added    = "added"
	Removed  = "removed"
	Renamed  = "renamed"
	Modified = "modified"
)

// FileDiff compares the renders of one prompt at two versions.
type FileDiff struct {
	// Path is the prompt now (the old path for a removed prompt); OldPath
	// is set for a renamed one.
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	Status  string `json:"status"`
	// Old and New are the renders; nil for an added or removed prompt.
	Old *Result `json:"-"`
	New *Result `json:"-"`
	// Rounds are the rounds of either version, aligned by section.
	Rounds []RoundDiff `json:"rounds"`
	// Sections are the token and cost change per section, in the new
	// version's order (removed sections last); Run is the whole run's.
	Sections []Change `json:"sections"`
	Run      Change   `json:"run"`
}

// RoundDiff is one round of either version, aligned by its key (section,
// fanout arm and its position among the section's rounds).
type RoundDiff struct {
	Key string `json:"key"`
	// Old and New are the round's positions in each run, 0 when absent.
	Old, New int    `json:"-"`
	OldRound *Round `json:"-"`
	NewRound *Round `json:"-"`
	// Status is Added, Removed, Modified, or "" when unchanged.
	Status string `json:"status,omitempty"`
	// Words is the word diff of the messages ([-old-]{+new+}), empty
	// when they are the same.
	Words string `json:"words,omitempty"`
	// Tools lists the changes of the tools offered; Model the model
	// change ("a → b"); Moved the change of position in the run.
	Tools []string `json:"tools,omitempty"`
	Model string   `json:"model,omitempty"`
	Moved string   `json:"moved,omitempty"`
	// Tokens is the change of the round's known input tokens.
	Tokens Change `json:"tokens"`
}

// Change is the tokens (known part, exact) and cost (input, lower bound)
// of something in both versions.
type Change struct {
	Name      string   `json:"name,omitempty"`
	OldTokens int      `json:"old_tokens"`
	NewTokens int      `json:"new_tokens"`
	OldCost   *float64 `json:"old_cost,omitempty"`
	NewCost   *float64 `json:"new_cost,omitempty"`
	// oldUnpriced and newUnpriced mark a side with a round whose model
	// has no prices: its cost is unknown.
	oldUnpriced, newUnpriced bool
}

// Delta is the token change.
func (c Change) Delta() int { return c.NewTokens - c.OldTokens }

// Diff compares old and new renders of one prompt (either may be nil).
func Diff(path, oldPath string, old, new *Result) *FileDiff {
	fd := &FileDiff{Path: path, Old: old, New: new, Status: Modified}
	switch {
	case old == nil:
		fd.Status = Added
	case new == nil:
		fd.Status = Removed
	case oldPath != "" && oldPath != path:
		fd.Status, fd.OldPath = Renamed, oldPath
	}
	oldRounds, newRounds := rounds(old), rounds(new)
	oldKeys, newKeys := keys(oldRounds), keys(newRounds)
	oldBy := map[string]int{}
	for i, k := range oldKeys {
		oldBy[k] = i
	}
	seen := map[string]bool{}
	sections := map[string]*Change{}
	var order []string
	section := func(name string) *Change {
		c, ok := sections[name]
		if !ok {
			c = &Change{Name: name}
			sections[name] = c
			order = append(order, name)
		}
		return c
	}
	for j, rd := range newRounds {
		k := newKeys[j]
		seen[k] = true
		d := RoundDiff{Key: k, New: j + 1, NewRound: rd}
		sc := section(rd.Section)
		i, ok := oldBy[k]
		if !ok {
			d.Status = Added
			d.Tokens = Change{NewTokens: rd.Tokens.Known, NewCost: costMin(rd)}
		} else {
			o := oldRounds[i]
			d.Old, d.OldRound = i+1, o
			compareRounds(&d, o, rd)
		}
		addChange(sc, d.Tokens)
		fd.Rounds = append(fd.Rounds, d)
	}
	for i, o := range oldRounds {
		if seen[oldKeys[i]] {
			continue
		}
		d := RoundDiff{Key: oldKeys[i], Old: i + 1, OldRound: o, Status: Removed, Tokens: Change{OldTokens: o.Tokens.Known, OldCost: costMin(o)}}
		addChange(section(o.Section), d.Tokens)
		fd.Rounds = append(fd.Rounds, d)
	}
	for _, name := range order {
		fd.Sections = append(fd.Sections, *sections[name])
		addChange(&fd.Run, *sections[name])
	}
	fd.Run.Name = "run"
	return fd
}

func rounds(r *Result) []*Round {
	if r == nil {
		return nil
	}
	return r.Rounds
}

// keys names each round by its section, arm and position among that
// entry's rounds: a section moved in the file keeps its rounds' keys.
func keys(rs []*Round) []string {
	n := map[string]int{}
	out := make([]string, len(rs))
	for i, rd := range rs {
		k := rd.Section
		if rd.Arm > 0 {
			k += fmt.Sprintf(" (arm %d)", rd.Arm)
		}
		n[k]++
		if n[k] > 1 {
			k += fmt.Sprintf(" #%d", n[k])
		}
		out[i] = k
	}
	return out
}

func compareRounds(d *RoundDiff, o, n *Round) {
	d.Tokens = Change{OldTokens: o.Tokens.Known, NewTokens: n.Tokens.Known, OldCost: costMin(o), NewCost: costMin(n)}
	if ops := WordDiff(messageText(o), messageText(n)); Changed(ops) {
		d.Words = FormatWordDiff(ops)
	}
	d.Tools = toolChanges(o, n)
	if o.Request.Model != n.Request.Model {
		d.Model = o.Request.Model + " → " + n.Request.Model
	}
	if d.Old != d.New {
		d.Moved = fmt.Sprintf("round %d → round %d", d.Old, d.New)
	}
	if d.Words != "" || len(d.Tools) > 0 || d.Model != "" || o.Body != n.Body {
		d.Status = Modified
	}
	if d.Status == Modified && d.Words == "" && len(d.Tools) == 0 && d.Model == "" {
		// The bytes differ where no words do: options or whitespace.
		d.Words = "(the request's options or whitespace changed)"
	}
}

// messageText is the messages of a round with their roles.
func messageText(rd *Round) string {
	var sb strings.Builder
	for _, m := range rd.Request.Messages {
		sb.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return sb.String()
}

// toolChanges lists tools offered or withdrawn and changed descriptions
// and schemas.
func toolChanges(o, n *Round) []string {
	type spec struct{ desc, params string }
	specs := func(rd *Round) (map[string]spec, []string) {
		m := map[string]spec{}
		var names []string
		for _, t := range rd.Request.Tools {
			m[t.Function.Name] = spec{t.Function.Description, compactJSON(t.Function.Parameters)}
			names = append(names, t.Function.Name)
		}
		return m, names
	}
	om, onames := specs(o)
	nm, nnames := specs(n)
	var out []string
	for _, name := range nnames {
		os, ok := om[name]
		ns := nm[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("tool %s added: %s", name, ns.desc))
		default:
			if os.desc != ns.desc {
				out = append(out, fmt.Sprintf("tool %s description: %s", name, FormatWordDiff(WordDiff(os.desc, ns.desc))))
			}
			if os.params != ns.params {
				out = append(out, fmt.Sprintf("tool %s parameters: %s", name, FormatWordDiff(WordDiff(schemaWords(os.params), schemaWords(ns.params)))))
			}
		}
	}
	for _, name := range onames {
		if _, ok := nm[name]; !ok {
			out = append(out, fmt.Sprintf("tool %s removed", name))
		}
	}
	return out
}

// schemaWords spaces a JSON schema's punctuation so that the word diff
// shows the changed names and values.
func schemaWords(s string) string {
	r := strings.NewReplacer("{", " { ", "}", " } ", ",", " , ", ":", " : ", "[", " [ ", "]", " ] ")
	return r.Replace(s)
}

func costMin(rd *Round) *float64 {
	if rd.Cost == nil {
		return nil
	}
	v := rd.Cost.InputMin
	return &v
}

// addChange adds c into sum. A side's cost is known while every round on
// that side had prices.
func addChange(sum *Change, c Change) {
	sum.OldTokens += c.OldTokens
	sum.NewTokens += c.NewTokens
	if c.OldTokens > 0 {
		sum.OldCost, sum.oldUnpriced = addSide(sum.OldCost, sum.oldUnpriced || c.oldUnpriced, c.OldCost)
	}
	if c.NewTokens > 0 {
		sum.NewCost, sum.newUnpriced = addSide(sum.NewCost, sum.newUnpriced || c.newUnpriced, c.NewCost)
	}
}

func addSide(sum *float64, unpriced bool, v *float64) (*float64, bool) {
	if unpriced || v == nil {
		return nil, true
	}
	x := *v
	if sum != nil {
		x += *sum
	}
	return &x, false
}
