package toolrule

import (
	"reflect"
	"strings"
	"testing"
)

// TestPickerCalibration is the calibration table for DefaultPickerConfig:
// capability phrases, as prompt authors write them, and the outcome each
// must give on the fixture catalog. Changing the scorer or a default
// threshold must keep every row.
func TestPickerCalibration(t *testing.T) {
	p := NewPicker(fixtureCatalog, DefaultPickerConfig())
	ws, wf := ID{"promptforge", "web_search"}, ID{"promptforge", "web_fetch"}
	rf, wr := ID{"workspace", "read_file"}, ID{"workspace", "write_file"}
	cases := []struct {
		need string
		want Outcome
		ids  []ID
	}{
		// The seed's own example and the examples/ prompts.
		{"web search capability", Bind, []ID{ws}},
		{"Search the web and return a list of results (title, url, description).", Bind, []ID{ws}},
		{"Fetch a web page and return its main content as markdown.", Bind, []ID{wf}},
		{"fetch a url", Bind, []ID{wf}},
		{"read a file", Bind, []ID{rf}},
		{"read files from disk", Bind, []ID{rf}},
		{"write to a file", Bind, []ID{wr}},
		{"list a directory", Bind, []ID{{"workspace", "list_directory"}}},
		{"run a shell command", Bind, []ID{{"workspace", "run_shell"}}},
		{"send email", Bind, []ID{{"mcp", "send_email"}}},
		{"weather forecast", Bind, []ID{{"mcp", "get_weather"}}},
		{"query the database with SQL", Bind, []ID{{"mcp", "sql_query"}}},
		{"translate text", Bind, []ID{{"mcp", "translate"}}},
		{"look up a customer", Bind, []ID{{"kb", "lookup_customer"}}},
		// Solo floor: one shared distinctive word, nothing else close.
		{"schedule a meeting on the calendar", Bind, []ID{{"mcp", "create_event"}}},
		// Twins on one server.
		{"search the documentation", Duplicate, []ID{{"mcp", "search_documentation"}, {"mcp", "search_docs"}}},
		{"search", Duplicate, []ID{{"mcp", "search_docs"}, {"mcp", "search_documentation"}}},
		// Real choices.
		{"file", Ambiguous, []ID{rf, wr}},
		{"look up a record", Ambiguous, []ID{{"kb", "lookup_customer"}, {"kb", "lookup_order"}}},
		// Nothing relevant. The lexical scorer misses synonyms ("regex" vs
		// "regular expression"), so this one is Absent rather than grep: the
		// author gets an error, never a wrong tool.
		{"tell a joke", Absent, nil},
		{"search code for a regex", Absent, nil},
		{"the tool", Absent, nil},
		{"   ", Invalid, nil},
	}
	for _, c := range cases {
		d := p.Resolve(c.need)
		if d.Outcome != c.want || !reflect.DeepEqual(d.IDs, c.ids) {
			t.Errorf("%q: got %v %v (scores %.3f), want %v %v", c.need, d.Outcome, d.IDs, d.Scores, c.want, c.ids)
		}
		if (d.Err("tool", c.need) == nil) != (c.want == Bind) {
			t.Errorf("%q: Err mismatch", c.need)
		}
	}
}

func TestPickerContract(t *testing.T) {
	yes, no := true, false
	// Hint tie-break: equal scores, the read-only tool leads.
	cat := []Entry{
		{ID: ID{"a", "x"}, Name: "delete_note", Description: "Manage notes.", Hints: Hints{Destructive: &yes}},
		{ID: ID{"b", "y"}, Name: "delete_note", Description: "Manage notes.", Hints: Hints{ReadOnly: &yes, Destructive: &no}},
	}
	p := NewPicker(cat, DefaultPickerConfig())
	d := p.Resolve("manage notes")
	if d.Outcome != Ambiguous || d.IDs[0] != (ID{"b", "y"}) {
		t.Fatalf("hint order: %+v", d)
	}
	// Same text on one server: Duplicate; different servers: Ambiguous.
	cat[1].ID.Server = "a"
	if d := NewPicker(cat, DefaultPickerConfig()).Resolve("manage notes"); d.Outcome != Duplicate {
		t.Fatalf("twins: %+v", d)
	}
	// Empty catalog.
	if d := NewPicker(nil, DefaultPickerConfig()).Resolve("anything"); d.Outcome != Absent {
		t.Fatalf("empty: %+v", d)
	}
	// Cache: the same text gives the identical decision.
	d1, d2 := p.Resolve("manage notes"), p.Resolve("manage notes")
	if !reflect.DeepEqual(d1, d2) {
		t.Fatal("cache")
	}
	// Inclusive floor: a leader exactly at SimilarityFloor binds.
	cfg := DefaultPickerConfig()
	one := NewPicker([]Entry{{ID: ID{"s", "t"}, Name: "t", Description: "alpha beta"}}, cfg)
	s := one.Score("alpha")[0]
	cfg.SimilarityFloor, cfg.SoloFloor = s, s
	if d := NewPicker([]Entry{{ID: ID{"s", "t"}, Name: "t", Description: "alpha beta"}}, cfg).Resolve("alpha"); d.Outcome != Bind {
		t.Fatalf("inclusive floor: %+v", d)
	}
	if !strings.Contains(Decision{Outcome: Absent}.Err("tool", "x").Error(), `no tool matches capability "x"`) {
		t.Fatal("absent message")
	}
}

func TestEnrichedText(t *testing.T) {
	if got := EnrichedText("read_file", "Read a file from disk.", []string{"encoding", "path"}); got != "read file. Read a file from disk.. parameters: encoding, path" {
		t.Fatal(got)
	}
	if got := EnrichedText("model", "", nil); got != "model" {
		t.Fatal(got)
	}
}

func TestPickerClosest(t *testing.T) {
	p := NewPicker(fixtureCatalog, DefaultPickerConfig())
	got := p.Closest("translate a poem", 2)
	if len(got) == 0 || got[0].ID != (ID{"mcp", "translate"}) || got[0].Score <= 0 {
		t.Fatalf("Closest = %v, want mcp/translate first", got)
	}
	if len(got) > 2 {
		t.Fatalf("Closest returned %d entries, want at most 2", len(got))
	}
	if got := p.Closest("zzz qqq", 3); len(got) != 0 {
		t.Fatalf("Closest for words no tool has = %v, want none", got)
	}
}

// TestSharedWordsDoNotDecide: a word every catalog entry has ("model",
// which starts every model's text) gives no entry a score of its own, so
// adding a second model keeps a need bound that bound with one; and two
// similar models stay bindable by the words that tell them apart.
func TestSharedWordsDoNotDecide(t *testing.T) {
	model := func(id, desc string) Entry {
		return Entry{ID: ID{"gateway", id}, Name: "model", Description: desc}
	}
	fast := model("small", "Small fast model for quick answers, chat and simple tasks")
	large := model("large", "Large reasoning model for careful analysis, coding and long documents")
	for _, need := range []string{"a careful general-purpose writing model", "a model suited for careful analysis"} {
		one := NewPicker([]Entry{large}, DefaultPickerConfig()).Resolve(need)
		two := NewPicker([]Entry{fast, large}, DefaultPickerConfig()).Resolve(need)
		if one.Outcome != Bind || two.Outcome != Bind || two.IDs[0] != large.ID {
			t.Errorf("%q: alone %v %v, beside a small model %v %v; want both bound to large", need, one.Outcome, one.Scores, two.Outcome, two.Scores)
		}
	}
	// Two models alike but for their size: the shared words say nothing,
	// the size binds.
	a := model("llama-8b", "Llama 3.1 8B instruct model for general chat")
	b := model("llama-70b", "Llama 3.1 70B instruct model for general chat")
	p := NewPicker([]Entry{a, b}, DefaultPickerConfig())
	if d := p.Resolve("the 70B llama chat model"); d.Outcome != Bind || d.IDs[0] != b.ID {
		t.Errorf("70B: %v %v %v", d.Outcome, d.IDs, d.Scores)
	}
	if d := p.Resolve("a general chat model"); d.Outcome == Bind {
		t.Errorf("a need only of shared words picked %v (%v)", d.IDs, d.Scores)
	}
}
