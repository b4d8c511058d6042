package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Message is one chat message in the OpenAI wire format (docs/language.md#gateway). Content
// is always sent, even when empty, because the gateway requires content or
// a tool call on every message.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as the JSON
// text the model produced (validated to be an object).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec advertises one tool to the model.
type ToolSpec struct {
	Type     string       `json:"type"`
	Function FunctionSpec `json:"function"`
}

// FunctionSpec is the advertised name, description and JSON Schema.
type FunctionSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is a chat completion request. Optional fields are pointers so
// that only what the model binding sets goes on the wire.
type Request struct {
	Model              string          `json:"model"`
	Messages           []Message       `json:"messages"`
	Tools              []ToolSpec      `json:"tools,omitempty"`
	ToolChoice         string          `json:"tool_choice,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	MaxTokens          *int64          `json:"max_tokens,omitempty"`
	ChatTemplateKwargs *TemplateKwargs `json:"chat_template_kwargs,omitempty"`
	// OnText, when set, asks a live gateway to stream the answer and
	// receives each piece of its text as it arrives (stream.go); the
	// response, the cassette and the tape are the assembled answer.
	// Replays answer whole and never call it.
	OnText func(text string) `json:"-"`
}

// TemplateKwargs carries the thinking switch.
type TemplateKwargs struct {
	EnableThinking bool `json:"enable_thinking"`
}

// Response is a decoded, validated chat completion (docs/language.md#gateway).
type Response struct {
	// Content is the reply text; HasContent is false when it was absent or
	// null.
	Content    string
	HasContent bool
	// ToolCalls is non-empty exactly for a tool-call turn.
	ToolCalls []ToolCall
	// FinishReason is "" with HasFinishReason false when absent or null.
	FinishReason    string
	HasFinishReason bool
	// Reasoning is the first non-blank reasoning text, for debugging only.
	Reasoning string
	// Usage is the token count the gateway reported, nil when it sent
	// none (or one that is not a wire-format usage object).
	Usage *Usage
}

// Usage is a response's token count (the wire format's "usage").
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// decodeUsage reads "usage" leniently: it is informational, so a missing,
// null or malformed value (negative counts included) is nil rather than
// an error that fails the run.
func decodeUsage(raw json.RawMessage) *Usage {
	if len(raw) == 0 {
		return nil
	}
	var u *Usage
	if json.Unmarshal(raw, &u) != nil || u == nil || u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 {
		return nil
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// decodeResponse validates a 2xx body against the response rules of
// docs/language.md#gateway.
func decodeResponse(body []byte) (*Response, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, malformed("body is not a JSON object")
	}
	var choices []json.RawMessage
	if err := json.Unmarshal(top["choices"], &choices); err != nil || len(choices) == 0 {
		return nil, malformed("choices must be a non-empty array")
	}
	var choice map[string]json.RawMessage
	if err := json.Unmarshal(choices[0], &choice); err != nil || choice == nil {
		return nil, malformed("choices[0] must be an object")
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(choice["message"], &msg); err != nil || msg == nil {
		return nil, malformed("choices[0].message must be an object")
	}
	r := &Response{}
	if fr, ok, err := optString(choice["finish_reason"]); err != nil {
		return nil, malformed("finish_reason must be a string or null")
	} else if ok {
		r.FinishReason, r.HasFinishReason = fr, true
	}
	for _, k := range []string{"reasoning_content", "reasoning", "thinking"} {
		s, _, err := optString(msg[k])
		if err != nil {
			return nil, malformed("%s must be a string or null", k)
		}
		if r.Reasoning == "" && strings.TrimSpace(s) != "" {
			r.Reasoning = s
		}
	}
	if raw, ok := msg["tool_calls"]; ok && !isNull(raw) {
		var calls []json.RawMessage
		if err := json.Unmarshal(raw, &calls); err != nil {
			return nil, malformed("tool_calls must be an array")
		}
		seen := map[string]bool{}
		for i, c := range calls {
			tc, err := decodeCall(c)
			if err != nil {
				return nil, malformed("tool_calls[%d]: %s", i, err.Error())
			}
			if seen[tc.ID] {
				return nil, malformed("tool_calls[%d]: duplicate id %q in one turn", i, tc.ID)
			}
			seen[tc.ID] = true
			r.ToolCalls = append(r.ToolCalls, tc)
		}
	}
	s, ok, err := optString(msg["content"])
	if err != nil {
		return nil, malformed("message.content must be a string or null")
	}
	r.Content, r.HasContent = s, ok
	r.Usage = decodeUsage(top["usage"])
	return r, nil
}

type callErr string

func (e callErr) Error() string { return string(e) }

func decodeCall(raw json.RawMessage) (ToolCall, error) {
	var c struct {
		ID       *string `json:"id"`
		Type     *string `json:"type"`
		Function *struct {
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return ToolCall{}, callErr("not an object with string fields")
	}
	if c.Type == nil || *c.Type != "function" {
		return ToolCall{}, callErr(`type must be "function"`)
	}
	if c.ID == nil || strings.TrimSpace(*c.ID) == "" {
		return ToolCall{}, callErr("id must be a non-blank string")
	}
	if c.Function == nil || c.Function.Name == nil || strings.TrimSpace(*c.Function.Name) == "" {
		return ToolCall{}, callErr("function.name must be a non-blank string")
	}
	var args string
	if err := json.Unmarshal(c.Function.Arguments, &args); err != nil {
		return ToolCall{}, callErr("function.arguments must be a string")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return ToolCall{}, callErr("function.arguments must be a JSON object")
	}
	// Keep the model's compact form for the history echo.
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(args)); err == nil {
		args = buf.String()
	}
	return ToolCall{ID: *c.ID, Type: "function", Function: FunctionCall{Name: *c.Function.Name, Arguments: args}}, nil
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// optString decodes an absent/null/string field.
func optString(raw json.RawMessage) (string, bool, error) {
	if isNull(raw) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, err
	}
	return s, true, nil
}

// Model is one catalog entry of GET {base}/models (docs/language.md#model-catalog).
type Model struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Context     uint32 `json:"context"`
	// Thinking is "never", "always" or "switchable".
	Thinking string `json:"thinking"`
	// ToolDialect is "openai" (default) or "gemma3_tool_code".
	ToolDialect string `json:"tool_dialect"`
	// PriceInput and PriceOutput are the prices of a million input and
	// output tokens (a gateway file's price_input and price_output,
	// docs/gateway.md#prices); zero when the catalog gives none.
	PriceInput  float64 `json:"price_input,omitempty"`
	PriceOutput float64 `json:"price_output,omitempty"`
}

// DefaultThinking and DefaultToolDialect are what a catalog entry that
// leaves the field out means (docs/language.md#model-catalog).
const (
	DefaultThinking    = "never"
	DefaultToolDialect = "openai"
)

// UndescribedHelp is how to describe the models of a plain
// OpenAI-compatible server, which lists them without descriptions.
const UndescribedHelp = "models.bind chooses a model by its description and context size, which a plain " +
	"OpenAI-compatible /v1/models does not give: describe the models in a gateway file " +
	"([[endpoint]] with the server's base_url, one [[model]] with name, description, context, upstream " +
	"and endpoints per model) and pass it with --gateway-config FILE or " + EnvConfig + " (minimal files in docs/gateway.md)"

func decodeCatalog(body []byte) ([]Model, error) {
	var top struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, malformed("model catalog is not {\"data\":[...]}")
	}
	seen := map[string]bool{}
	out := make([]Model, 0, len(top.Data))
	var undescribed []string
	var missing map[string]bool
	for i, raw := range top.Data {
		var e struct {
			ID          *string `json:"id"`
			Description *string `json:"description"`
			Context     *int64  `json:"context"`
			Thinking    *string `json:"thinking"`
			ToolDialect *string `json:"tool_dialect"`
			ToolsMode   *string `json:"tools_mode"`
			PriceInput  float64 `json:"price_input"`
			PriceOutput float64 `json:"price_output"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, malformed("model catalog entry %d: wrong field types", i)
		}
		if e.ID == nil || *e.ID == "" || strings.ContainsFunc(*e.ID, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0x1e }) {
			return nil, malformed("model catalog entry %d: id must be non-empty without control characters", i)
		}
		if seen[*e.ID] {
			return nil, malformed("model catalog: duplicate id %q", *e.ID)
		}
		seen[*e.ID] = true
		m := Model{ID: *e.ID, Thinking: DefaultThinking, ToolDialect: DefaultToolDialect}
		if e.PriceInput < 0 || e.PriceOutput < 0 {
			return nil, malformed("model %q: prices must not be negative", m.ID)
		}
		m.PriceInput, m.PriceOutput = e.PriceInput, e.PriceOutput
		if e.Description == nil || e.Context == nil {
			// A plain OpenAI-compatible entry (id, object, created,
			// owned_by): collected and reported together below.
			if missing == nil {
				missing = map[string]bool{}
			}
			missing["description"] = missing["description"] || e.Description == nil
			missing["context"] = missing["context"] || e.Context == nil
			undescribed = append(undescribed, m.ID)
			continue
		}
		m.Description = *e.Description
		if *e.Context <= 0 || *e.Context > 1<<32-1 {
			return nil, malformed("model %q: context must be an integer in 1..4294967295", m.ID)
		}
		m.Context = uint32(*e.Context)
		if e.Thinking != nil {
			m.Thinking = *e.Thinking
		}
		if m.Thinking != "never" && m.Thinking != "always" && m.Thinking != "switchable" {
			return nil, malformed("model %q: thinking must be never, always or switchable", m.ID)
		}
		if e.ToolDialect != nil {
			m.ToolDialect = *e.ToolDialect
		}
		mode := map[string]string{"openai": "native", "gemma3_tool_code": "emulated"}[m.ToolDialect]
		if mode == "" {
			return nil, malformed("model %q: unknown tool_dialect %q", m.ID, m.ToolDialect)
		}
		if e.ToolsMode != nil && *e.ToolsMode != mode {
			return nil, malformed("model %q: tools_mode %q does not match dialect %s", m.ID, *e.ToolsMode, m.ToolDialect)
		}
		out = append(out, m)
	}
	if len(undescribed) > 0 {
		return nil, undescribedErr(undescribed, missing)
	}
	return out, nil
}

// undescribedErr says which catalog entries lack what, and how to
// describe them. It is a configuration error, not a malformed response:
// retrying cannot help.
func undescribedErr(ids []string, missing map[string]bool) *Error {
	var what []string
	for _, f := range []string{"description", "context"} {
		if missing[f] {
			what = append(what, f)
		}
	}
	shown := ids
	if len(shown) > 3 {
		shown = shown[:3]
	}
	q := make([]string, len(shown))
	for i, id := range shown {
		q[i] = strconv.Quote(id)
	}
	more := ""
	if len(ids) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(ids)-len(shown))
	}
	return &Error{Kind: KindConfig, Msg: fmt.Sprintf("the gateway's model catalog does not describe its models: %s%s %s no %s; %s",
		strings.Join(q, ", "), more, map[bool]string{true: "has", false: "have"}[len(ids) == 1], strings.Join(what, " and no "), UndescribedHelp)}
}

// DecodeCatalog decodes a GET {base}/models body as the client does
// (docs/language.md#model-catalog), for hosts reading a recorded catalog.
func DecodeCatalog(body []byte) ([]Model, error) { return decodeCatalog(body) }
