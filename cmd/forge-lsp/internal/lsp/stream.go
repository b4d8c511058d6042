package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	fastjson "github.com/goccy/go-json"
	segjson "github.com/segmentio/encoding/json"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// maxMessageSize is the largest message body the server reads. Bigger
// frames are skipped (and answered with an error when they carry an id),
// never buffered, so a runaway client cannot exhaust memory.
const maxMessageSize = 64 << 20

// newStream returns the LSP base-protocol framing (Content-Length headers)
// over rwc. Unlike jsonrpc2.NewStream it survives bad input: the library's
// connection closes itself on the first Read error, so a frame that is not
// JSON, not a JSON-RPC message, or too large is answered with a JSON-RPC
// error (id null when none can be recovered) and skipped, and unknown or
// malformed header lines are ignored. Only a failure of the underlying
// reader ends the stream.
//
// Writes never block: frames are queued and written by one goroutine in
// order. The library reads and dispatches on a single goroutine, so a
// handler that blocked on a write while the peer was itself blocked
// writing to us (a request of ours crossing a reply of theirs) would
// deadlock both ends of an unbuffered pipe.
func newStream(rwc io.ReadWriteCloser) jsonrpc2.Stream {
	return newStreamLimit(rwc, maxMessageSize)
}

func newStreamLimit(rwc io.ReadWriteCloser, limit int64) *stream {
	s := &stream{rwc: rwc, in: bufio.NewReaderSize(rwc, 64<<10), drained: make(chan struct{}), limit: limit}
	s.cond = sync.NewCond(&s.qmu)
	go s.writer()
	return s
}

type stream struct {
	rwc   io.ReadWriteCloser
	in    *bufio.Reader
	limit int64 // largest body read; bigger frames are skipped

	qmu     sync.Mutex
	cond    *sync.Cond
	queue   [][]byte
	werr    error
	closing bool
	drained chan struct{} // closed when the writer goroutine ends
	once    sync.Once

	// predecodeOn is set when the server reading the stream takes a
	// message's params from predecoded (serve, before the first Read).
	predecodeOn bool
	// pre is the last message Read returned when it decoded its params
	// itself (predecode). The library's connection reads a message and
	// runs its handler on one goroutine, so the handler finds it here
	// before the next Read.
	pre predecoded
	// body is the buffer Read reads message bodies into, reused from one
	// message to the next (see readBody).
	body []byte
}

// maxKeptBody bounds the body buffer a stream keeps between messages: a
// larger message is read into a buffer of its own, which is dropped
// after it, so that one huge frame does not pin its size for the life
// of the connection.
const maxKeptBody = 1 << 20

// readBody reads the next length bytes of the stream into the stream's
// body buffer and returns them; they are valid until the next readBody.
// Nothing a message decodes to refers to its body: goccy (predecode)
// decodes from a copy of its own, the library's decoder (DecodeMessage)
// from the buffer it reads into, and encoding/json copies what it keeps.
// A whole-text didChange of a 10,000-line prompt (300 KB) thus costs one
// copy of the text, the decoded one, instead of two.
func (s *stream) readBody(length int64) ([]byte, error) {
	var data []byte
	if length <= maxKeptBody {
		if int64(cap(s.body)) < length {
			s.body = make([]byte, length)
		}
		data = s.body[:length]
	} else {
		data = make([]byte, length)
	}
	n, err := io.ReadFull(s.in, data)
	return data[:n], err
}

// predecoded is a message whose params Read has decoded.
type predecoded struct {
	msg    jsonrpc2.Message
	params any
}

// didChangeName is the method a frame must name for predecode to try it.
var didChangeName = []byte(`"` + protocol.MethodTextDocumentDidChange + `"`)

// predecode decodes a didChange notification in one pass, its params
// into the handler's type, and returns the message (whose own params
// are empty: the handler takes them from predecoded), or nil for any
// other message or one that does not decode, which the library then
// decodes as always. The library's decode copies the frame into a
// buffer of at least 32 KB that it grows as it reads, and parses the
// whole text, and the handler then decodes the params again: for a
// 10,000-line document that was three times the time and the garbage of
// this one pass (BenchmarkDecodeDidChange), and for a keystroke's small
// frame 32 KB of garbage.
func (s *stream) predecode(data []byte) jsonrpc2.Message {
	var env struct {
		ID     json.RawMessage  `json:"id"`
		Method string           `json:"method"`
		Params *didChangeParams `json:"params"`
	}
	if fastjson.Unmarshal(data, &env) != nil || env.Method != protocol.MethodTextDocumentDidChange || env.Params == nil ||
		(len(env.ID) > 0 && string(env.ID) != "null") {
		return nil
	}
	msg, err := jsonrpc2.NewNotification(env.Method, nil)
	if err != nil {
		return nil
	}
	s.pre = predecoded{msg: msg, params: env.Params}
	predecodes.Add(1)
	return msg
}

// smallMessage is the largest body decodeSmall takes: below it the
// library's decode (jsonrpc2.DecodeMessage) allocates mostly a read
// buffer of 32 KB (its decoder's smallest), whatever the message's size.
const smallMessage = 16 << 10

// smallWire is the library's wire form of a message (jsonrpc2's
// combined), with the version kept raw.
type smallWire struct {
	Version json.RawMessage     `json:"jsonrpc"`
	ID      *jsonrpc2.ID        `json:"id,omitempty"`
	Method  string              `json:"method"`
	Params  *segjson.RawMessage `json:"params,omitempty"`
	Result  *segjson.RawMessage `json:"result,omitempty"`
	Error   *segjson.RawMessage `json:"error,omitempty"`
}

// decodeSmall decodes a small request or notification with params, as
// the library's DecodeMessage would, without its decoder's 32 KB buffer:
// every request an editor sends while typing (hover, semantic tokens,
// inlay hints, code lenses, ...) and every message the client reads.
// It returns nil for anything else (large, a response, no params, a
// version other than "2.0", not JSON), which the library then decodes
// as always. The message's params are the library's own marshalling of
// the received ones (jsonrpc2.NewCall): the same JSON value, compacted;
// nothing in the message refers to data.
func decodeSmall(data []byte) jsonrpc2.Message {
	if len(data) > smallMessage {
		return nil
	}
	var w smallWire
	// The params are only read here: NewCall and NewNotification copy
	// them.
	if rest, err := segjson.Parse(data, &w, segjson.DontCopyRawMessage); err != nil || len(bytes.TrimSpace(rest)) > 0 {
		return nil
	}
	if w.Method == "" || w.Params == nil || w.Result != nil || w.Error != nil || string(w.Version) != `"2.0"` {
		return nil
	}
	var msg jsonrpc2.Message
	var err error
	if w.ID != nil {
		msg, err = jsonrpc2.NewCall(*w.ID, w.Method, *w.Params)
	} else {
		msg, err = jsonrpc2.NewNotification(w.Method, *w.Params)
	}
	if err != nil {
		return nil
	}
	return msg
}

// predecodes counts the messages predecode decoded (for tests).
var predecodes atomic.Int64

// predecoded returns the params Read decoded for req, or nil. It is
// called by the handler of req, on the goroutine that read it.
func (s *stream) predecoded(req jsonrpc2.Request) any {
	if s.pre.msg != nil && s.pre.msg == jsonrpc2.Message(req) {
		return s.pre.params
	}
	return nil
}

// writer writes queued frames until Close, then drains what is left.
func (s *stream) writer() {
	defer close(s.drained)
	for {
		s.qmu.Lock()
		for len(s.queue) == 0 && !s.closing {
			s.cond.Wait()
		}
		batch := s.queue
		s.queue = nil
		closing := s.closing
		s.qmu.Unlock()
		for _, b := range batch {
			if _, err := s.rwc.Write(b); err != nil {
				s.qmu.Lock()
				s.werr = err
				s.queue = nil
				s.qmu.Unlock()
				return
			}
		}
		if closing && len(batch) == 0 {
			return
		}
	}
}

// Read implements jsonrpc2.Stream.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		length, total, err := s.readHeader()
		if err != nil {
			return nil, total, err
		}
		if length > s.limit {
			n, err := io.CopyN(io.Discard, s.in, length)
			total += n
			if err != nil {
				return nil, total, fmt.Errorf("skipping oversized message: %w", err)
			}
			s.writeError(nil, jsonrpc2.InvalidRequest, fmt.Sprintf("message of %d bytes exceeds the %d byte limit", length, s.limit))
			continue
		}
		data, err := s.readBody(length)
		total += int64(len(data))
		if err != nil {
			return nil, total, fmt.Errorf("reading message body: %w", err)
		}
		if s.predecodeOn && bytes.Contains(data, didChangeName) {
			if msg := s.predecode(data); msg != nil {
				return msg, total, nil
			}
		}
		s.pre = predecoded{}
		if msg := decodeSmall(data); msg != nil {
			return msg, total, nil
		}
		// Decode first: a request or notification with a method (nearly
		// every message, and all large ones such as a full-sync didChange)
		// needs no second look, and probing every message with a generic
		// decode doubled the cost of reading a large document.
		msg, err := jsonrpc2.DecodeMessage(data)
		if err == nil {
			if _, isResp := msg.(*jsonrpc2.Response); !isResp {
				return msg, total, nil
			}
		}
		if mayHaveMethod(data) {
			if id, bad := emptyMethod(data); bad {
				// The library would take it for a response and drop it.
				if id != nil {
					s.writeError(id, jsonrpc2.InvalidRequest, "invalid request: method must be a non-empty string")
				}
				continue
			}
		}
		if err != nil {
			switch {
			case !json.Valid(data):
				s.writeError(nil, jsonrpc2.ParseError, "cannot parse message: "+err.Error())
			case hasMethod(data):
				s.writeError(recoverID(data), jsonrpc2.InvalidRequest, "invalid request: "+err.Error())
			default:
				// A malformed response (or an error reply with id null):
				// answering it could start an endless exchange of errors.
			}
			continue
		}
		return msg, total, nil
	}
}

// readHeader reads header lines up to the blank line and returns the
// Content-Length. Frames without a usable length are skipped.
func (s *stream) readHeader() (length, total int64, err error) {
	length = -1
	for {
		line, err := s.in.ReadString('\n')
		total += int64(len(line))
		if err != nil {
			return 0, total, fmt.Errorf("reading header: %w", err)
		}
		// A frame with no Content-Length, or one too short, leaves its
		// body (or the rest of it) in front of the next frame's header:
		// resynchronise on the header so that the next message is not
		// lost with it.
		if i := strings.Index(strings.ToLower(line), "content-length:"); i > 0 {
			line = line[i:]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if length >= 0 {
				return length, total, nil
			}
			// A blank line with no length: garbage or a stray separator.
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, perr := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if perr == nil && v >= 0 {
				length = v
			}
		}
	}
}

// mayHaveMethod reports whether data can hold a "method" member: the name
// written plainly, or any \u escape (a key may be spelled with escapes).
// A real response (nearly always without either) then skips emptyMethod's
// generic decode, which on a large result costs as much as the decode
// itself.
func mayHaveMethod(data []byte) bool {
	return bytes.Contains(data, []byte(`"method"`)) || bytes.Contains(data, []byte(`\u`))
}

// emptyMethod reports whether data is a request or notification whose
// method is empty or not a string, with the request's id (nil for a
// notification or an unreadable id).
func emptyMethod(data []byte) (*jsonrpc2.ID, bool) {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return nil, false
	}
	raw, ok := probe["method"]
	if !ok {
		return nil, false
	}
	var m string
	if json.Unmarshal(raw, &m) == nil && m != "" {
		return nil, false
	}
	return recoverID(data), true
}

// hasMethod reports whether data is a JSON object with a "method" member,
// i.e. a request or notification rather than a response.
func hasMethod(data []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return false
	}
	_, ok := probe["method"]
	return ok
}

// recoverID extracts a request id from a message the library refused, so
// the error reply can reach the caller that is waiting for it.
func recoverID(data []byte) *jsonrpc2.ID {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &probe) != nil || len(probe.ID) == 0 {
		return nil
	}
	var n int32
	if json.Unmarshal(probe.ID, &n) == nil {
		id := jsonrpc2.NewNumberID(n)
		return &id
	}
	var f float64
	if json.Unmarshal(probe.ID, &f) == nil {
		id := jsonrpc2.NewNumberID(int32(f))
		return &id
	}
	var str string
	if json.Unmarshal(probe.ID, &str) == nil {
		id := jsonrpc2.NewStringID(str)
		return &id
	}
	return nil
}

type wireError struct {
	Code    jsonrpc2.Code `json:"code"`
	Message string        `json:"message"`
}

// writeError writes a JSON-RPC error response directly. id nil is written
// as null, which the library's Response type cannot express.
func (s *stream) writeError(id *jsonrpc2.ID, code jsonrpc2.Code, msg string) {
	var idJSON []byte = []byte("null")
	if id != nil {
		if b, err := id.MarshalJSON(); err == nil {
			idJSON = b
		}
	}
	body, err := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", idJSON, wireError{code, msg}})
	if err != nil {
		return
	}
	_ = s.writeFrame(body)
}

func (s *stream) writeFrame(body []byte) error {
	var buf bytes.Buffer
	buf.Grow(len(body) + 32)
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(body))
	buf.Write(body)
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.werr != nil {
		return s.werr
	}
	if s.closing {
		return io.ErrClosedPipe
	}
	s.queue = append(s.queue, buf.Bytes())
	s.cond.Signal()
	return nil
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	// ctx is deliberately ignored: a reply to a cancelled request must still
	// be written (LSP requires one), and the library would drop it.
	var body []byte
	var err error
	if r, ok := msg.(*jsonrpc2.Response); ok && r.Err() == nil && len(r.Result()) > 0 {
		body, err = appendResponse(nil, r)
	} else if m, ok := msg.(json.Marshaler); ok {
		// The library's messages marshal themselves (segmentio); going
		// through encoding/json would re-validate and compact the output,
		// which costs milliseconds on a whole-document didChange.
		body, err = m.MarshalJSON()
	} else {
		body, err = json.Marshal(msg)
	}
	if err != nil {
		return 0, fmt.Errorf("marshaling message: %w", err)
	}
	if err := s.writeFrame(body); err != nil {
		return 0, fmt.Errorf("writing message: %w", err)
	}
	return int64(len(body)), nil
}

// appendResponse appends a successful response as the library writes it
// ({"jsonrpc":"2.0","result":...,"id":...}), without the library's second
// pass over the result: jsonrpc2.NewResponse already marshalled it, and
// re-validating a large result (semantic tokens of a long prompt are
// about a megabyte of numbers) costs as much as encoding it.
// TestAppendResponse checks that the bytes are the library's.
func appendResponse(b []byte, r *jsonrpc2.Response) ([]byte, error) {
	rid := r.ID()
	id, err := rid.MarshalJSON()
	if err != nil {
		return nil, err
	}
	result := r.Result()
	b = append(b, `{"jsonrpc":"2.0","result":`...)
	b = append(b, result...)
	b = append(b, `,"id":`...)
	b = append(b, id...)
	return append(b, '}'), nil
}

// Close implements jsonrpc2.Stream. Queued frames (the reply to shutdown,
// the last diagnostics) are flushed first, for at most a second: a peer
// that stopped reading must not keep the server alive.
func (s *stream) Close() error {
	var err error
	s.once.Do(func() {
		s.qmu.Lock()
		s.closing = true
		s.cond.Broadcast()
		s.qmu.Unlock()
		select {
		case <-s.drained:
		case <-time.After(time.Second):
		}
		err = s.rwc.Close()
	})
	return err
}
