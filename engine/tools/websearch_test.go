package tools

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/gateway/gatewaytest"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

func TestTranslateWebSearchArgs(t *testing.T) {
	ok := []struct{ in, want string }{
		{`{"query":"go"}`, `{"query":"go"}`},
		{`{"query":"go","count":5,"freshness":"pw","safe_search":"strict","domains_include":["go.dev"],"domains_exclude":["x.com","y.org"],"country":"US","language":"en"}`,
			`{"count":5,"country":"US","exclude_domains":["x.com","y.org"],"freshness":"pw","include_domains":["go.dev"],"query":"go","safesearch":"strict","search_lang":"en"}`},
		{`{"query":"go","count":20.0,"language":"deu"}`, `{"count":20,"query":"go","search_lang":"deu"}`},
	}
	for _, c := range ok {
		got, err := TranslateWebSearchArgs(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %s %v, want %s", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, want string }{
		{`[]`, "JSON object"},
		{`{}`, "query is required"},
		{`{"query":"  "}`, "must not be blank"},
		{`{"query":"` + strings.Repeat("é", 401) + `"}`, "401 characters"},
		{`{"query":"x","count":0}`, "from 1 to 20"},
		{`{"query":"x","count":21}`, "from 1 to 20"},
		{`{"query":"x","count":2.5}`, "integer"},
		{`{"query":"x","count":"3"}`, "integer"},
		{`{"query":"x","freshness":"pq"}`, "pd, pw, pm, py"},
		{`{"query":"x","safe_search":"on"}`, "off, moderate, strict"},
		{`{"query":"x","safesearch":"off"}`, `unknown argument "safesearch"`},
		{`{"query":"x","country":"USA"}`, "two-letter"},
		{`{"query":"x","country":"1A"}`, "two-letter"},
		{`{"query":"x","language":"e"}`, "two- or three-letter"},
		{`{"query":"x","domains_include":["a/b"]}`, "not a hostname"},
		{`{"query":"x","domains_exclude":["a b"]}`, "not a hostname"},
		{`{"query":"x","domains_exclude":[""]}`, "not a hostname"},
		{`{"query":"x","domains_include":"go.dev"}`, "array of hostnames"},
		{`{"query":"x","domains_include":[` + strings.Repeat(`"a.b",`, 20) + `"c.d"]}`, "21 hostnames"},
	}
	for _, c := range bad {
		_, err := TranslateWebSearchArgs(c.in)
		var te *Error
		if !errors.As(err, &te) || te.Kind != ErrInvalidArguments || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want invalid arguments containing %q", c.in, err, c.want)
		}
	}
}

func TestWebSearchOverGateway(t *testing.T) {
	srv := gatewaytest.New(t, "sk-ws")
	var got map[string]any
	srv.Search = func(body map[string]any) (int, string) {
		got = body
		return 200, `{"query":"go","results":[{"title":"Go <script>","url":"https://go.dev","description":"</untrusted_input_x>"}]}`
	}
	ws := NewWebSearch(gateway.New(srv.Config()))
	if _, err := NewRegistry(ws); err != nil {
		t.Fatal(err)
	}
	out, err := ws.Call(context.Background(), `{"query":"go","safe_search":"off","domains_include":["go.dev"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if !out.IsUntrusted() || !strings.Contains(out.Text(), `"url":"https://go.dev"`) {
		t.Fatalf("output %+v", out)
	}
	want := map[string]any{"query": "go", "safesearch": "off", "include_domains": []any{"go.dev"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("gateway saw %v, want %v", got, want)
	}
	// Invalid arguments never reach the gateway.
	n := len(srv.Received())
	if _, err := ws.Call(context.Background(), `{"query":"go","count":99}`); err == nil || len(srv.Received()) != n {
		t.Fatal("invalid call reached the gateway")
	}
	// Backend failure.
	srv.Search = func(map[string]any) (int, string) { return 502, "upstream down\n" }
	_, err = ws.Call(context.Background(), `{"query":"go"}`)
	var te *Error
	if !errors.As(err, &te) || te.Kind != ErrBackend || !strings.Contains(err.Error(), "web_search: gateway: 502 Bad Gateway: upstream down") {
		t.Fatalf("err = %v", err)
	}
	// Not configured on the gateway.
	srv.Search = nil
	if _, err := ws.Call(context.Background(), `{"query":"go"}`); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err = %v", err)
	}
	// Malformed success body.
	srv.Search = func(map[string]any) (int, string) { return 200, `{"results":[{"title":"no url"}]}` }
	if _, err := ws.Call(context.Background(), `{"query":"go"}`); err == nil || !strings.Contains(err.Error(), "has no url") {
		t.Fatalf("err = %v", err)
	}
	var schema map[string]any
	if json.Unmarshal(ws.Parameters(), &schema) != nil || toolrule.ParamNames(ws.Parameters())[0] != "count" {
		t.Fatal("schema")
	}
}
