package tokens

import "encoding/json"

// Per-message framing of chat models (role and separators), as OpenAI's
// guide to counting chat tokens gives it for cl100k_base models: every
// message costs MessageOverhead tokens besides its content, and the
// reply is primed with ReplyPriming more.
const (
	MessageOverhead = 3
	ReplyPriming    = 3
)

// Tool is a tool as a round sends it: name, description and JSON schema.
type Tool struct {
	Name, Description string
	// Parameters is the JSON schema; nil when unknown (counted as {}).
	Parameters json.RawMessage
}

// ToolTokens counts a tool's function spec as the gateway request
// carries it ({"type":"function","function":{...}}).
func ToolTokens(t Tool) int {
	params := t.Parameters
	if len(params) == 0 || !json.Valid(params) {
		params = json.RawMessage(`{}`)
	}
	b, err := json.Marshal(map[string]any{"type": "function", "function": map[string]any{
		"name": t.Name, "description": t.Description, "parameters": params,
	}})
	if err != nil {
		return Count(t.Name + t.Description)
	}
	return Count(string(b))
}

// Round is the lower bound of one model round: the section's
// conversation so far (its user messages; earlier replies are not known
// statically and count as empty), the tool specs in scope and the
// framing.
type Round struct {
	// Messages are the token counts of the user messages, oldest first;
	// the last one is the prose block the round is for.
	Messages []int
	// Tools are the tool specs in scope, with their token counts.
	Tools      []Tool
	ToolTokens []int
}

// History is the content tokens of the round's messages.
func (r Round) History() int {
	n := 0
	for _, m := range r.Messages {
		n += m
	}
	return n
}

// ToolTotal is the tokens of the tool specs.
func (r Round) ToolTotal() int {
	n := 0
	for _, t := range r.ToolTokens {
		n += t
	}
	return n
}

// Framing is the per-message and reply-priming overhead.
func (r Round) Framing() int { return len(r.Messages)*MessageOverhead + ReplyPriming }

// Total is the round's lower bound in tokens.
func (r Round) Total() int { return r.History() + r.ToolTotal() + r.Framing() }
