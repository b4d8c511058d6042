package gatewayd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

const braveKey = "brave-SECRET-77"

// braveResults is a scripted Brave answer: tracking parameters, one host
// five times, www and bare hosts, markup and control characters, a
// non-navigable and an over-long URL.
var braveResults = []map[string]any{
	{"title": "  One\n&amp; only\u0007 ", "url": "https://www.a.com/1?utm_source=x&id=7&fbclid=z#frag", "description": "d1 &lt;b&gt;", "age": "2 days ago", "extra_snippets": []string{"s1", " ", "s2"}, "thumbnail": map[string]any{"src": "t"}},
	{"title": "Two", "url": "https://a.com/2?gclid=1&mc_cid=2&mc_eid=3", "description": "d2"},
	{"title": "Three", "url": "https://a.com/3", "description": "d3"},
	{"title": "Four", "url": "https://blog.b.org/4?utm_medium=m", "description": "d4"},
	{"title": "Bad", "url": "javascript:alert(1)", "description": "x"},
	{"title": "Long", "url": "https://c.net/" + strings.Repeat("x", urlMaxChars), "description": "x"},
	{"title": "Five", "url": "https://c.net/5", "description": "d5"},
	{"title": "Six", "url": "https://notb.org/6", "description": "d6"},
}

func braveServer(t *testing.T) (*httptest.Server, *[]url.Values) {
	var mu sync.Mutex
	var queries []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != braveKey {
			w.WriteHeader(401)
			w.Write([]byte(`{"error":"token ` + r.Header.Get("X-Subscription-Token") + `"}`))
			return
		}
		mu.Lock()
		queries = append(queries, r.URL.Query())
		mu.Unlock()
		if r.URL.Query().Get("q") == "boom" {
			w.WriteHeader(500)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"type": "search", "web": map[string]any{"results": braveResults}})
	}))
	t.Cleanup(srv.Close)
	return srv, &queries
}

// TestWebSearch: the request is validated and proxied with the gateway's
// key; results are trimmed, stripped of tracking parameters, filtered by
// domain and diversified by host.
func TestWebSearch(t *testing.T) {
	brave, queries := braveServer(t)
	g := open(t, fileFor("http://127.0.0.1:9", `
[tools.web_search]
provider = "brave"
api_key = "`+braveKey+`"
base_url = "`+brave.URL+`/res/v1/"
default_safesearch = "strict"
`))
	search := func(body string) (int, map[string]any) {
		code, out, _ := call(t, g, "POST", "/v1/tools/web_search", serverKey, body)
		return code, out
	}
	urls := func(out map[string]any) string {
		var s []string
		for _, r := range out["results"].([]any) {
			s = append(s, r.(map[string]any)["url"].(string))
		}
		return strings.Join(s, " ")
	}
	code, out := search(`{"query":"  rust async  ","count":5,"freshness":"pw","country":"us","search_lang":"en"}`)
	if code != 200 || out["query"] != "rust async" {
		t.Fatalf("%d %v", code, out)
	}
	if got := urls(out); got != "https://www.a.com/1?id=7#frag https://a.com/2 https://blog.b.org/4 https://c.net/5 https://notb.org/6" {
		t.Fatalf("urls: %s", got)
	}
	first := out["results"].([]any)[0].(map[string]any)
	if first["title"] != "One & only" || first["description"] != "d1 <b>" || first["site_name"] != "a.com" || first["age"] != "2 days ago" || first["thumbnail"] != nil {
		t.Errorf("first result %v", first)
	}
	if sn, _ := first["extra_snippets"].([]any); len(sn) != 2 {
		t.Errorf("snippets %v", first["extra_snippets"])
	}
	q := (*queries)[0]
	if q.Get("q") != "rust async" || q.Get("count") != "15" || q.Get("extra_snippets") != "true" || q.Get("freshness") != "pw" ||
		q.Get("country") != "us" || q.Get("search_lang") != "en" || q.Get("safesearch") != "strict" {
		t.Errorf("brave query %v", q)
	}
	// Domain filters: bare names, matching the host or its subdomains.
	_, out = search(`{"query":"q","include_domains":["B.org","c.net"]}`)
	if got := urls(out); got != "https://blog.b.org/4 https://c.net/5" {
		t.Errorf("include: %s", got)
	}
	_, out = search(`{"query":"q","exclude_domains":["a.com"],"count":1}`)
	if got := urls(out); got != "https://blog.b.org/4" {
		t.Errorf("exclude + count 1: %s", got)
	}
	if q := (*queries)[len(*queries)-1]; q.Get("count") != "3" {
		t.Errorf("count 1 asks for 3: %v", q)
	}
	_, out = search(`{"query":"q","count":200}`)
	if q := (*queries)[len(*queries)-1]; q.Get("count") != "20" || len(out["results"].([]any)) != 5 {
		t.Errorf("count clamps to max_count: %v", q)
	}
	for body, want := range map[string]string{
		`{"query":"   "}`: "empty query",
		`{"query":"q","include_domains":["https://a.com"]}`: "invalid include domain",
		`{"query":"q","exclude_domains":["a.com:80"]}`:      "invalid exclude domain",
		`{"query":"q","include_domains":["-a.com"]}`:        "invalid include domain",
		`{"query":"q","freshness":"soon"}`:                  "invalid freshness",
		`{"query":"q","safesearch":"max"}`:                  "invalid safesearch",
		`{"query":"q","country":"usa"}`:                     "invalid country",
		`{"query":"q","limit":3}`:                           "unknown field",
		`{"query":"q","count":-1}`:                          "count must be in 0..255",
	} {
		code, out := search(body)
		if _, c, msg := errorOf(out); code != 400 || c != "malformed_request" || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %s %q, want %q", body, code, c, msg, want)
		}
	}
	code, out = search(`{"query":"boom"}`)
	if _, c, msg := errorOf(out); code != 502 || c != "upstream_error" || !strings.HasPrefix(msg, "web_search: upstream returned 500") {
		t.Errorf("brave 500: %d %v", code, out)
	}
	if long := strings.Repeat("é", 600); true {
		search(`{"query":"` + long + `"}`)
		if q := (*queries)[len(*queries)-1]; len([]rune(q.Get("q"))) != maxQueryChars {
			t.Errorf("query not trimmed to %d characters", maxQueryChars)
		}
	}
}

// TestSanitize: the text rules on their own.
func TestSanitize(t *testing.T) {
	if got := sanitize("a\tb\n\n c\u0000d &quot;q&quot; &#39;", 100); got != `a b cd "q" '` {
		t.Errorf("sanitize: %q", got)
	}
	if got := sanitize(strings.Repeat("ab", 10), 5); got != "ababa" {
		t.Errorf("truncate: %q", got)
	}
	for in, want := range map[string]string{
		"https://x.com/p?utm_a=1":           "https://x.com/p",
		"https://x.com/p?a=1&utm_b=2&b=3#f": "https://x.com/p?a=1&b=3#f",
		"https://x.com/p#f?utm_a=1":         "https://x.com/p#f", // split at the first ?, as upstream
		"https://x.com/p?fbclidx=1":         "https://x.com/p?fbclidx=1",
	} {
		if got := stripTracking(in); got != want {
			t.Errorf("stripTracking(%q) = %q, want %q", in, got, want)
		}
	}
}
