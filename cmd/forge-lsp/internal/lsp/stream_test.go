package lsp

import (
	"bytes"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestAppendResponse: the stream writes a successful response with the
// same bytes as the library's own marshalling.
func TestAppendResponse(t *testing.T) {
	results := []any{
		nil,
		[]uint32{0, 1, 2, 4294967295},
		map[string]any{"data": []int{}, "text": "<a href=\"x\">&amp; \u2028 é 😀</a>"},
		"plain",
		3.5,
		[]any{map[string]any{"nested": []any{true, false, nil}}},
		&semanticTokensResult{Data: []uint32{1, 2, 3}},
	}
	ids := []jsonrpc2.ID{jsonrpc2.NewNumberID(7), jsonrpc2.NewStringID("req-<1>")}
	for _, id := range ids {
		for _, res := range results {
			r, err := jsonrpc2.NewResponse(id, res, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendResponse(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("id %v result %#v:\n got %s\nwant %s", id, res, got, want)
			}
		}
	}
}

// TestMayHaveMethod: every message that can carry a "method" member is
// probed, whatever the spelling of its key.
func TestMayHaveMethod(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"data":[1,2,3]}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, true},
		{`{"jsonrpc":"2.0","id":1,"\u006dethod":""}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":"\u00e9"}`, true},
	} {
		if got := mayHaveMethod([]byte(c.data)); got != c.want {
			t.Errorf("mayHaveMethod(%s) = %v, want %v", c.data, got, c.want)
		}
	}
}
