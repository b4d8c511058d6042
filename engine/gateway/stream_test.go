package gateway

import (
	"strings"
	"testing"
)

// TestAssembleBounds: a streamed answer is bounded as a plain one is: an
// event line over MaxStreamEvent, an answer over the response cap and a
// stream that ends before its last event are errors; an error event is
// the gateway's error answer; a stream that ends after its finish reason
// without [DONE] is whole.
func TestAssembleBounds(t *testing.T) {
	ok := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n"
	if body, _, err := assemble(strings.NewReader(ok), 1<<20, nil); err != nil || !strings.Contains(string(body), `"content":"hi"`) || !strings.Contains(string(body), `"finish_reason":"stop"`) {
		t.Fatalf("%s %v", body, err)
	}
	long := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("x", MaxStreamEvent) + "\"}}]}\n\n"
	if _, _, err := assemble(strings.NewReader(long), 4<<20, nil); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("an oversized event: %v", err)
	}
	if _, _, err := assemble(strings.NewReader(strings.Repeat(ok, 10)), 200, nil); err == nil || !strings.Contains(err.Error(), "cap") {
		t.Errorf("over the cap: %v", err)
	}
	cut := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
	if _, _, err := assemble(strings.NewReader(cut), 1<<20, nil); err != errStreamCut {
		t.Errorf("a cut stream: %v", err)
	}
	_, eb, err := assemble(strings.NewReader(cut+"data: {\"error\":{\"message\":\"boom\"}}\n\n"), 1<<20, nil)
	if err != nil || string(eb) != `{"error":{"message":"boom"}}` {
		t.Errorf("an error event: %s %v", eb, err)
	}
	if got := string(streamBody([]byte(`{"model":"m"}`))); got != `{"model":"m","stream":true,"stream_options":{"include_usage":true}}` {
		t.Errorf("streamBody: %s", got)
	}
}
