package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxFrame is the largest JSON-RPC message the server reads, on stdio (one
// line) and over HTTP (one request body): 16 MiB, room for an input_text
// as large as the biggest store file (docs/mcp.md#limits).
const MaxFrame = 16 << 20

// frameFilter stands between a client's stream and the SDK's stdio
// transport, which ends the session on the first frame it cannot decode.
// It passes on each well-formed JSON-RPC message as one line and answers
// every other line itself with a JSON-RPC error, so that one bad frame
// (too large, not JSON, not an object, a batch, a wrong version or id)
// never ends the server or the runs in flight. Lines are read a chunk at a
// time: an oversized line is skipped, never held in memory.
type frameFilter struct {
	in  *bufio.Reader
	out *syncWriter
	max int
}

// syncWriter serialises whole writes: the SDK writes a message in one
// call, and the filter's error answers go between them, never inside.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) Close() error { return nil }

// filterFrames copies the valid frames of in to the returned reader and
// answers the others on out. The reader ends when in does.
func filterFrames(in io.Reader, out *syncWriter, max int) io.ReadCloser {
	pr, pw := io.Pipe()
	f := &frameFilter{in: bufio.NewReaderSize(in, 64<<10), out: out, max: max}
	go func() { pw.CloseWithError(f.run(pw)) }()
	return pr
}

func (f *frameFilter) run(pw io.Writer) error {
	var line []byte
	for {
		chunk, err := f.in.ReadSlice('\n')
		switch {
		case len(line)+len(chunk) > f.max+2:
			// Too large: drop what was read and skip to the line's end.
			size := len(line) + len(chunk)
			line = line[:0]
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = f.in.ReadSlice('\n')
				size += len(chunk)
			}
			f.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is over the %d-byte limit (%d bytes or more read); nothing of it was run. Send large inputs as input_file.", f.max, size))
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, chunk...)
			continue
		default:
			line = append(line, chunk...)
			if msg := bytes.TrimSpace(line); len(msg) > 0 {
				if ok := f.check(msg); ok {
					if _, werr := pw.Write(append(msg, '\n')); werr != nil {
						return werr
					}
				}
			}
			line = line[:0]
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// check reports whether msg is one JSON-RPC message the SDK accepts, and
// answers it with an error otherwise.
func (f *frameFilter) check(msg []byte) bool {
	if !json.Valid(msg) {
		f.reject(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line")
		return false
	}
	switch msg[0] {
	case '[':
		f.reject(nil, jsonrpc.CodeInvalidRequest, "batches are not supported (MCP 2025-06-18 and later); send one message per line")
		return false
	case '{':
	default:
		f.reject(nil, jsonrpc.CodeInvalidRequest, "invalid request: a JSON-RPC message is an object")
		return false
	}
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(msg, &head)
	id := head.ID
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		// Echo the id when it is one a client can match.
		if len(id) > 0 && id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' {
			id = nil
		}
		f.reject(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error()+` (a message needs "jsonrpc":"2.0", a string or number id, and a method, or a result or error)`)
		return false
	}
	return true
}

// reject writes a JSON-RPC error answer with id (null when nil).
func (f *frameFilter) reject(id json.RawMessage, code int64, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		return
	}
	_, _ = f.out.Write(append(b, '\n'))
}
