package gatewayd

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// Web search limits (docs/gateway.md#web-search).
const (
	maxQueryChars       = 512
	titleMaxChars       = 512
	descriptionMaxChars = 4096
	urlMaxChars         = 2048
	snippetMaxChars     = 1024
	maxExtraSnippets    = 8
	ageMaxChars         = 64
)

type searchRequest struct {
	Query          *string  `json:"query"`
	Count          *int     `json:"count"`
	Freshness      *string  `json:"freshness"`
	Country        *string  `json:"country"`
	SearchLang     *string  `json:"search_lang"`
	Safesearch     *string  `json:"safesearch"`
	IncludeDomains []string `json:"include_domains"`
	ExcludeDomains []string `json:"exclude_domains"`
}

// SearchResult is one trimmed result of POST /v1/tools/web_search.
type SearchResult struct {
	Title         string   `json:"title"`
	URL           string   `json:"url"`
	Description   string   `json:"description"`
	Age           string   `json:"age,omitempty"`
	SiteName      string   `json:"site_name,omitempty"`
	ExtraSnippets []string `json:"extra_snippets,omitempty"`
}

const searchWhat = "web_search: "

// webSearch proxies a search to Brave with the gateway's key and trims the
// results: sanitised text, tracking parameters stripped, domain filters,
// at most max_per_host results per site, then count.
func (g *Gateway) webSearch(w http.ResponseWriter, r *http.Request, s *state) *apiError {
	cfg := s.search
	if cfg == nil {
		return errNotConfigured("web_search")
	}
	body, e := readBody(r)
	if e != nil {
		return e
	}
	var req searchRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return errMalformed("web_search: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if req.Query == nil || strings.TrimSpace(*req.Query) == "" {
		return errMalformed("web_search: empty query")
	}
	query := string(firstRunes(strings.TrimSpace(*req.Query), maxQueryChars))
	fresh, safe, country, lang := opt(req.Freshness), opt(req.Safesearch), opt(req.Country), opt(req.SearchLang)
	switch {
	case fresh != "" && !validFreshness(fresh, false):
		return errMalformed("web_search: invalid freshness %q", fresh)
	case safe != "" && !validSafesearch(safe, false):
		return errMalformed("web_search: invalid safesearch %q", safe)
	case country != "" && !alphaCode(country, 2, 2):
		return errMalformed("web_search: invalid country %q", country)
	case lang != "" && !alphaCode(lang, 2, 3):
		return errMalformed("web_search: invalid search_lang %q", lang)
	}
	include, e := domainFilters("include", req.IncludeDomains)
	if e != nil {
		return e
	}
	exclude, e := domainFilters("exclude", req.ExcludeDomains)
	if e != nil {
		return e
	}
	count := *cfg.DefaultCount
	if req.Count != nil {
		if *req.Count < 0 || *req.Count > 255 {
			return errMalformed("web_search: count must be in 0..255")
		}
		count = *req.Count
	}
	count = min(max(count, 1), *cfg.MaxCount)
	if fresh == "" {
		fresh = cfg.DefaultFreshness
	}
	if safe == "" {
		safe = cfg.DefaultSafesearch
	}
	q := url.Values{"q": {query}, "count": {strconv.Itoa(min(count*3, *cfg.MaxCount))}, "extra_snippets": {"true"}}
	for k, v := range map[string]string{"freshness": fresh, "country": country, "search_lang": lang, "safesearch": safe} {
		if v != "" {
			q.Set(k, v)
		}
	}
	results, e := g.brave(r.Context(), cfg, q)
	if e != nil {
		return e
	}
	results = postProcess(results, *cfg.StripTracking, include, exclude, *cfg.MaxPerHost, count)
	if results == nil {
		results = []SearchResult{}
	}
	writeJSON(w, 200, map[string]any{"query": query, "results": results})
	return nil
}

func (g *Gateway) brave(ctx context.Context, cfg *WebSearchConfig, q url.Values) ([]SearchResult, *apiError) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *cfg.BaseURL+"/web/search?"+q.Encode(), nil)
	if err != nil {
		return nil, errTransport(searchWhat)
	}
	req.Header.Set("X-Subscription-Token", cfg.APIKey.Expose())
	req.Header.Set("Accept", "application/json")
	raw, e := g.do(req, cfg.APIKey, searchWhat)
	if e != nil {
		return nil, e
	}
	var parsed struct {
		Web *struct {
			Results []struct {
				Title         string   `json:"title"`
				URL           string   `json:"url"`
				Description   string   `json:"description"`
				Age           *string  `json:"age"`
				ExtraSnippets []string `json:"extra_snippets"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, errProtocol(searchWhat, "the search response is not Brave's JSON")
	}
	if parsed.Web == nil {
		return nil, nil
	}
	out := make([]SearchResult, 0, len(parsed.Web.Results))
	for _, x := range parsed.Web.Results {
		r := SearchResult{Title: x.Title, URL: x.URL, Description: x.Description, ExtraSnippets: x.ExtraSnippets}
		if x.Age != nil {
			r.Age = *x.Age
		}
		out = append(out, r)
	}
	return out, nil
}

// postProcess applies upstream's fixed order: sanitise, strip tracking,
// set site_name, drop over-long or non-navigable URLs, filter domains,
// diversify hosts, cap at count.
func postProcess(in []SearchResult, strip bool, include, exclude []string, perHost, count int) []SearchResult {
	var out []SearchResult
	seen := map[string]int{}
	for _, r := range in {
		u := r.URL
		if strip {
			u = stripTracking(u)
		}
		if len([]rune(u)) > urlMaxChars || !navigable(u) {
			continue
		}
		host := hostOf(u)
		res := SearchResult{
			Title:       sanitize(r.Title, titleMaxChars),
			URL:         u,
			Description: sanitize(r.Description, descriptionMaxChars),
			Age:         sanitize(r.Age, ageMaxChars),
			SiteName:    strings.TrimPrefix(host, "www."),
		}
		for i, sn := range r.ExtraSnippets {
			if i >= maxExtraSnippets {
				break
			}
			if sn = sanitize(sn, snippetMaxChars); sn != "" {
				res.ExtraSnippets = append(res.ExtraSnippets, sn)
			}
		}
		if len(include) > 0 && !matchesAny(host, include) || matchesAny(host, exclude) {
			continue
		}
		if len(out) >= count {
			break
		}
		if seen[res.SiteName] >= perHost {
			continue
		}
		seen[res.SiteName]++
		out = append(out, res)
	}
	return out
}

func matchesAny(host string, domains []string) bool {
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// stripTracking removes utm_*, fbclid, gclid, mc_cid and mc_eid from the
// query, keeping the rest and the fragment as written.
func stripTracking(u string) string {
	base, rest, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	query, frag, hasFrag := strings.Cut(rest, "#")
	var kept []string
	for _, pair := range strings.Split(query, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if pair == "" || strings.HasPrefix(name, "utm_") || name == "fbclid" || name == "gclid" || name == "mc_cid" || name == "mc_eid" {
			continue
		}
		kept = append(kept, pair)
	}
	if len(kept) > 0 {
		base += "?" + strings.Join(kept, "&")
	}
	if hasFrag {
		base += "#" + frag
	}
	return base
}

func navigable(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Hostname() != ""
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.ToLower(p.Hostname())
}

// sanitize drops control characters (newlines and tabs become spaces),
// collapses white space, decodes the common HTML entities and keeps at
// most n characters.
func sanitize(s string, n int) string {
	s = string(firstRunes(s, n*8))
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	s = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&apos;", "'").Replace(s)
	return string(firstRunes(s, n))
}

func firstRunes(s string, n int) []rune {
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return r
}

func opt(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

func alphaCode(v string, lo, hi int) bool {
	if len(v) < lo || len(v) > hi {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// domainFilters accepts bare host names: no scheme, path, port or white
// space; labels of letters, digits and inner hyphens.
func domainFilters(field string, in []string) ([]string, *apiError) {
	var out []string
	for _, raw := range in {
		d := strings.ToLower(strings.TrimSpace(raw))
		ok := d != "" && len(d) <= 253 && !strings.ContainsAny(d, "/: \t\n")
		for _, l := range strings.Split(d, ".") {
			ok = ok && l != "" && len(l) <= 63 && l[0] != '-' && l[len(l)-1] != '-' &&
				strings.IndexFunc(l, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }) < 0
		}
		if !ok {
			return nil, errMalformed("web_search: invalid %s domain %q (a bare host name such as example.com)", field, raw)
		}
		out = append(out, d)
	}
	return out, nil
}
