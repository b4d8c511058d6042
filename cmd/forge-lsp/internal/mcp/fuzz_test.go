package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// stdioSeeds are frames of every class TestStdioBadFramesAnswered names,
// and valid ones.
var stdioSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_prompt","arguments":{"prompt":"echo","args":"x"}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup_docs","arguments":{"name":"store.read"}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
	`{"jsonrpc":"2.0","id":5,"result":{}}`,
	`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":`,
	"\x00\xff\xfe\x01",
	`42`,
	`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`,
	`[]`,
	`{"id":8,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":9,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}\r\n\n\n",
}

// FuzzStdioFraming: whatever bytes arrive, the filter passes on only
// messages the SDK decodes, one a line, answers the rest, and a valid
// message after any garbage still gets through.
func FuzzStdioFraming(f *testing.F) {
	for _, s := range stdioSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("x", 5000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		const sentinel = `{"jsonrpc":"2.0","id":"sentinel","method":"ping"}`
		in := append(append(append([]byte{}, data...), '\n'), sentinel+"\n"...)
		var answers bytes.Buffer
		passed, err := io.ReadAll(filterFrames(bytes.NewReader(in), &syncWriter{w: &answers}, 4096))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(passed), "\n"), "\n")
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "[") {
				t.Fatalf("a batch passed: %q", l)
			}
			if _, err := jsonrpc.DecodeMessage([]byte(l)); err != nil {
				t.Fatalf("passed a frame the SDK cannot decode: %q: %v", l, err)
			}
		}
		if lines[len(lines)-1] != sentinel {
			t.Fatalf("the message after the input did not get through: %q", lines[len(lines)-1])
		}
		sc := bufio.NewScanner(&answers)
		for sc.Scan() {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil || len(m.ID) == 0 {
				t.Fatalf("an answer that is not a JSON-RPC error: %q", sc.Text())
			}
		}
	})
}

// dispatchServer is one `mcp --stdio` server the dispatch fuzzer talks
// to for the whole run, as a harness would.
var dispatchServer = sync.OnceValues(func() (*stdioServer, error) {
	dir, err := os.MkdirTemp("", "mcp-fuzz-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.md"), []byte(echoPrompt), 0o644); err != nil {
		return nil, err
	}
	return startStdio(&fuzzTB{}, dir), nil
})

// fuzzTB lets startStdio run outside one test; its failures panic.
type fuzzTB struct{ testing.TB }

func (fuzzTB) Helper()                           {}
func (fuzzTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (fuzzTB) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (fuzzTB) Cleanup(func())                    {}

var dispatchMu sync.Mutex
var dispatchN int

// FuzzJSONRPCDispatch: after any line a client sends, the server is still
// there and answers a ping; it never exits.
func FuzzJSONRPCDispatch(f *testing.F) {
	for _, s := range stdioSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dispatchMu.Lock()
		defer dispatchMu.Unlock()
		s, err := dispatchServer()
		if err != nil {
			t.Fatal(err)
		}
		s.t = t
		dispatchN++
		id := fmt.Sprintf("fuzz-ping-%d", dispatchN)
		s.send(string(bytes.ReplaceAll(data, []byte("fuzz-ping-"), nil)))
		s.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}`)
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-s.lines:
				if !ok {
					t.Fatalf("the server ended its output after %q; stderr %s", data, s.errb.String())
				}
				if strings.Contains(l, `"id":"`+id+`"`) {
					return
				}
			case code := <-s.done:
				t.Fatalf("the server exited %d after %q; stderr %s", code, data, s.errb.String())
			case <-deadline:
				t.Fatalf("no answer to a ping after %q", data)
			}
		}
	})
}
