package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// wireNames maps the seed's parameter names to the gateway's (docs/language.md#web-search).
var wireNames = map[string]string{
	"query": "query", "count": "count", "freshness": "freshness", "safe_search": "safesearch",
	"domains_include": "include_domains", "domains_exclude": "exclude_domains",
	"country": "country", "language": "search_lang",
}

// Searcher is the part of the gateway client web_search needs.
type Searcher interface {
	WebSearch(ctx context.Context, body []byte) ([]byte, error)
}

// WebSearch is the built-in web_search tool. Its output is untrusted.
type WebSearch struct {
	gw Searcher
}

// NewWebSearch returns web_search over a gateway.
func NewWebSearch(gw Searcher) *WebSearch { return &WebSearch{gw: gw} }

// ID implements Tool.
func (w *WebSearch) ID() toolrule.ID { return toolrule.WebSearchID }

// WireName implements Tool.
func (w *WebSearch) WireName() string { return "web_search" }

// Description implements Tool.
func (w *WebSearch) Description() string { return toolrule.WebSearchDescription }

// Parameters implements Tool.
func (w *WebSearch) Parameters() json.RawMessage { return json.RawMessage(toolrule.WebSearchSchema) }

// TranslateWebSearchArgs validates arguments given with the seed's names
// and returns the gateway request body (wire names, only the fields that
// were present, keys sorted). Every error is ErrInvalidArguments.
func TranslateWebSearchArgs(arguments string) ([]byte, error) {
	var in map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(arguments))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, invalidArgs("web_search: arguments must be a JSON object")
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]any{}
	for _, k := range keys {
		raw := in[k]
		wire, ok := wireNames[k]
		if !ok {
			return nil, invalidArgs("web_search: unknown argument %q; accepted: query, count, freshness, safe_search, domains_include, domains_exclude, country, language", k)
		}
		v, err := checkSearchArg(k, raw)
		if err != nil {
			return nil, err
		}
		out[wire] = v
	}
	if _, ok := out["query"]; !ok {
		return nil, invalidArgs("web_search: query is required")
	}
	return json.Marshal(out)
}

func checkSearchArg(k string, raw json.RawMessage) (any, error) {
	str := func() (string, error) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", invalidArgs("web_search: %s must be a string", k)
		}
		return s, nil
	}
	enum := func(allowed ...string) (any, error) {
		s, err := str()
		if err != nil {
			return nil, err
		}
		for _, a := range allowed {
			if s == a {
				return s, nil
			}
		}
		return nil, invalidArgs("web_search: %s must be one of %s, got %q", k, strings.Join(allowed, ", "), s)
	}
	letters := func(lo, hi int, what string) (any, error) {
		s, err := str()
		if err != nil {
			return nil, err
		}
		if len(s) < lo || len(s) > hi || strings.IndexFunc(s, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) }) >= 0 {
			return nil, invalidArgs("web_search: %s must be %s, got %q", k, what, s)
		}
		return s, nil
	}
	switch k {
	case "query":
		s, err := str()
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return nil, invalidArgs("web_search: query must not be blank")
		}
		if n := utf8.RuneCountInString(s); n > 400 {
			return nil, invalidArgs("web_search: query has %d characters, at most 400 are allowed", n)
		}
		return s, nil
	case "count":
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) {
			return nil, invalidArgs("web_search: count must be an integer from 1 to 20")
		}
		if f < 1 || f > 20 {
			return nil, invalidArgs("web_search: count must be from 1 to 20, got %v", f)
		}
		return int(f), nil
	case "freshness":
		return enum("pd", "pw", "pm", "py")
	case "safe_search":
		return enum("off", "moderate", "strict")
	case "country":
		return letters(2, 2, "a two-letter country code")
	case "language":
		return letters(2, 3, "a two- or three-letter language code")
	case "domains_include", "domains_exclude":
		var ds []string
		if json.Unmarshal(raw, &ds) != nil {
			return nil, invalidArgs("web_search: %s must be an array of hostnames", k)
		}
		if len(ds) > 20 {
			return nil, invalidArgs("web_search: %s has %d hostnames, at most 20 are allowed", k, len(ds))
		}
		for _, d := range ds {
			if strings.TrimSpace(d) == "" || utf8.RuneCountInString(d) > 128 || strings.ContainsRune(d, '/') ||
				strings.IndexFunc(d, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
				return nil, invalidArgs("web_search: %s entry %q is not a hostname (non-blank, at most 128 characters, no '/', no spaces)", k, d)
			}
		}
		return ds, nil
	}
	return nil, invalidArgs("web_search: unknown argument %q", k)
}

// Call validates and translates the arguments, posts them to the gateway
// and returns the raw result body as untrusted output.
func (w *WebSearch) Call(ctx context.Context, arguments string) (Output, error) {
	body, err := TranslateWebSearchArgs(arguments)
	if err != nil {
		return Output{}, err
	}
	if w.gw == nil {
		return Output{}, &Error{Kind: ErrOther, Msg: "web_search: " + gateway.ErrNoGateway}
	}
	resp, err := w.gw.WebSearch(ctx, body)
	if err != nil {
		kind := ErrBackend
		var ge *gateway.Error
		if errors.As(err, &ge) {
			switch ge.Kind {
			case gateway.KindTransport:
				kind = ErrTransport
			case gateway.KindCancelled:
				kind = ErrCancelled
			case gateway.KindConfig, gateway.KindReplay:
				kind = ErrOther
			}
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "web_search") {
			msg = "web_search: " + msg
		}
		return Output{}, &Error{Kind: kind, Msg: msg, Err: err}
	}
	if !utf8.Valid(resp) {
		return Output{}, &Error{Kind: ErrBackend, Msg: "web_search: response is not UTF-8"}
	}
	var shape struct {
		Results []struct {
			URL *string `json:"url"`
		} `json:"results"`
	}
	if json.Unmarshal(resp, &shape) != nil || !bytes.Contains(resp, []byte(`"results"`)) {
		return Output{}, &Error{Kind: ErrBackend, Msg: `web_search: response is not {"results":[...]}`}
	}
	for i, r := range shape.Results {
		if r.URL == nil || strings.TrimSpace(*r.URL) == "" {
			return Output{}, &Error{Kind: ErrBackend, Msg: fmt.Sprintf("web_search: result %d has no url", i)}
		}
	}
	return Untrusted(string(resp)), nil
}
