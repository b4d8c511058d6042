package render

import (
	"regexp"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/tokens"
)

// Tokens are a round's (or a run's) input tokens, counted as the context
// budgets count them (engine/tokens: each message's content, the message
// framing, the reply priming and each tool spec): Known is exact for all
// but the slots, and each slot adds a range from its budget.
type Tokens struct {
	// Known is the exact count of everything that is not a slot.
	Known int `json:"known"`
	// Min and Max bound the total; Max is nil when a slot is unbounded.
	Min int  `json:"min"`
	Max *int `json:"max,omitempty"`
	// Slots are the slots of the round's messages with their ranges.
	Slots []SlotTokens `json:"slots,omitempty"`
}

// SlotTokens is one slot occurrence and its token range.
type SlotTokens struct {
	Slot string `json:"slot"`
	Min  int    `json:"min"`
	Max  *int   `json:"max,omitempty"`
}

// Cost is money in the unit of the catalog's prices (price_input and
// price_output per million tokens, docs/gateway.md#prices): the input's
// range, and the most the reply may cost when max_tokens bounds it.
type Cost struct {
	InputMin float64  `json:"input_min"`
	InputMax *float64 `json:"input_max,omitempty"`
	// OutputMax is max_tokens × price_output; nil when no max_tokens is
	// set.
	OutputMax *float64 `json:"output_max,omitempty"`
}

// slotRe finds slots in rendered text; compiled on first use, so that
// commands which never count a rendered prompt's tokens (check, serve,
// version) do not compile it at process start.
var slotRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(SlotOpen + "[^" + SlotClose + "]*" + SlotClose)
})

// executionMax bounds sys.execution's tokens (a prefix and 16 hex digits).
const executionMax = 32

// account counts the tokens and cost of every round and of the run.
func account(res *Result, byID map[string]*gateway.Model) {
	// What bounds each reply slot: its round's max_tokens, else its
	// model's context.
	replyMax := map[string]*int{}
	total := Tokens{Max: new(int)}
	var cost *Cost
	priced := len(res.Rounds) > 0
	for _, rd := range res.Rounds {
		rd.Model = byID[rd.Request.Model]
		rd.Tokens = roundTokens(rd.Request, replyMax)
		var bound *int
		switch {
		case rd.Request.MaxTokens != nil:
			v := int(*rd.Request.MaxTokens)
			bound = &v
		case rd.Model != nil && rd.Model.Context > 0:
			v := int(rd.Model.Context)
			bound = &v
		}
		replyMax[rd.Reply] = bound
		rd.OverContext = rd.Model != nil && rd.Model.Context > 0 && rd.Tokens.Known > int(rd.Model.Context)
		if m := rd.Model; m != nil && (m.PriceInput > 0 || m.PriceOutput > 0) {
			rd.Cost = roundCost(rd.Tokens, rd.Request.MaxTokens, m)
		} else {
			priced = false
		}
		total.Known += rd.Tokens.Known
		total.Min += rd.Tokens.Min
		total.Slots = append(total.Slots, rd.Tokens.Slots...)
		if total.Max != nil && rd.Tokens.Max != nil {
			*total.Max += *rd.Tokens.Max
		} else {
			total.Max = nil
		}
		if priced {
			cost = addCost(cost, rd.Cost)
		}
	}
	total.Slots = nil // the rounds list them
	res.Tokens = total
	if priced {
		res.Cost = cost
	}
}

// roundTokens counts one request.
func roundTokens(req gateway.Request, replyMax map[string]*int) Tokens {
	t := Tokens{Known: tokens.ReplyPriming}
	for _, m := range req.Messages {
		t.Known += tokens.MessageOverhead + tokens.Count(slotRe().ReplaceAllString(m.Content, ""))
		for _, slot := range slotRe().FindAllString(m.Content, -1) {
			st := SlotTokens{Slot: slot}
			switch {
			case slot == ExecutionSlot:
				st.Max = intp(executionMax)
			default:
				if b, ok := replyMax[slot]; ok && b != nil {
					st.Max = intp(*b)
				}
			}
			t.Slots = append(t.Slots, st)
		}
	}
	for _, spec := range req.Tools {
		t.Known += toolTokens(spec)
	}
	t.Min = t.Known
	t.Max = intp(t.Known)
	for _, s := range t.Slots {
		t.Min += s.Min
		if t.Max != nil && s.Max != nil {
			*t.Max += *s.Max
		} else {
			t.Max = nil
		}
	}
	return t
}

// toolMemo holds the token counts of tool specs, since a prompt offers the
// same tools in many rounds; dropped whole when large (a language server
// renders many prompts).
var toolMemo = struct {
	sync.Mutex
	m map[string]int
}{m: map[string]int{}}

// toolTokens counts a tool spec as the budgets do (tokens.ToolTokens).
func toolTokens(spec gateway.ToolSpec) int {
	key := spec.Function.Name + "\x00" + spec.Function.Description + "\x00" + string(spec.Function.Parameters)
	toolMemo.Lock()
	n, ok := toolMemo.m[key]
	toolMemo.Unlock()
	if ok {
		return n
	}
	n = tokens.ToolTokens(tokens.Tool{Name: spec.Function.Name, Description: spec.Function.Description, Parameters: spec.Function.Parameters})
	toolMemo.Lock()
	if len(toolMemo.m) >= 4096 {
		toolMemo.m = map[string]int{}
	}
	toolMemo.m[key] = n
	toolMemo.Unlock()
	return n
}

func roundCost(t Tokens, maxTokens *int64, m *gateway.Model) *Cost {
	per := func(n int, price float64) float64 { return float64(n) * price / 1e6 }
	c := &Cost{InputMin: per(t.Min, m.PriceInput)}
	if t.Max != nil {
		v := per(*t.Max, m.PriceInput)
		c.InputMax = &v
	}
	if maxTokens != nil {
		v := per(int(*maxTokens), m.PriceOutput)
		c.OutputMax = &v
	}
	return c
}

// addCost adds b to a (nil a is zero); an unbounded part stays unbounded.
func addCost(a, b *Cost) *Cost {
	if a == nil {
		cp := *b
		if b.InputMax != nil {
			cp.InputMax = new(float64)
			*cp.InputMax = *b.InputMax
		}
		if b.OutputMax != nil {
			cp.OutputMax = new(float64)
			*cp.OutputMax = *b.OutputMax
		}
		return &cp
	}
	a.InputMin += b.InputMin
	if a.InputMax != nil && b.InputMax != nil {
		*a.InputMax += *b.InputMax
	} else {
		a.InputMax = nil
	}
	if a.OutputMax != nil && b.OutputMax != nil {
		*a.OutputMax += *b.OutputMax
	} else {
		a.OutputMax = nil
	}
	return a
}

func intp(v int) *int { return &v }
