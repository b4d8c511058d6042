//go:build unix

package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/gateway"
)

// TestReplayMemoryAtCap measures the peak resident memory of replaying a
// cassette just under the cap: 1 MiB responses, every one requested. It
// writes ~64 MB, so it runs only with FORGE_MEMTEST=1:
//
//	FORGE_MEMTEST=1 go test -run TestReplayMemoryAtCap -v ./engine/gateway
func TestReplayMemoryAtCap(t *testing.T) {
	if os.Getenv("FORGE_MEMTEST") == "" {
		t.Skip("set FORGE_MEMTEST=1 to measure (writes a cassette of ~64 MB)")
	}
	p := filepath.Join(t.TempDir(), "c.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"cassette":"forge-lsp","version":1}`)
	resp, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": strings.Repeat("x", 1<<20)}, "finish_reason": "stop"}}})
	req := func(i int) *gateway.Request {
		return &gateway.Request{Model: "m", Messages: []gateway.Message{{Role: "user", Content: fmt.Sprint("q", i)}}}
	}
	n := 0
	for size := int64(0); size+(2<<20) < fsread.Cassette.Max; n++ {
		body, _ := json.Marshal(req(n))
		line, _ := json.Marshal(map[string]any{"seq": n + 1, "method": "POST", "endpoint": "chat/completions", "request": json.RawMessage(body), "status": 200, "response": string(resp)})
		w.Write(append(line, '\n'))
		size += int64(len(line) + 1)
	}
	w.Flush()
	f.Close()
	fi, _ := os.Stat(p)
	c, err := gateway.NewReplay(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := c.Complete(context.Background(), req(i)); err != nil {
			t.Fatal(err)
		}
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	t.Logf("cassette %d MB (%d exchanges), peak resident %d MB", fi.Size()>>20, n, ru.Maxrss>>10)
	if ru.Maxrss>>10 >= 300 {
		t.Errorf("peak resident %d MB, want under 300", ru.Maxrss>>10)
	}
}
