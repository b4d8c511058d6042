package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// A Tape is a cassette held in memory: every exchange a run made, model
// calls and local tool results alike, in the order they completed. The
// debugger records each run on a tape and re-runs a prompt from the tape
// of the run before (a retake), so that a re-run pays only for the calls
// that changed (docs/debugging.md#what-if).
type Tape struct {
	mu        sync.Mutex
	exchanges []exchange
}

// Len is the number of exchanges on the tape.
func (t *Tape) Len() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.exchanges)
}

func (t *Tape) add(method, endpoint string, req []byte, status int, resp []byte) {
	ex := exchange{Method: method, Endpoint: endpoint, canon: canonical(req), Status: status, Response: string(resp)}
	t.mu.Lock()
	defer t.mu.Unlock()
	ex.Seq = len(t.exchanges) + 1
	t.exchanges = append(t.exchanges, ex)
}

// snapshot copies the exchanges.
func (t *Tape) snapshot() []exchange {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]exchange(nil), t.exchanges...)
}

// LoadTape reads a cassette file (NewRecording's format) onto a tape.
func LoadTape(path string) (*Tape, error) {
	c, err := NewReplay(path)
	if err != nil {
		return nil, err
	}
	return &Tape{exchanges: c.replay.exchanges}, nil
}

// WriteFile writes the tape as a cassette file that NewReplay and
// `forge-lsp run --replay` read. Bodies are passed through the key
// redaction, as a recording's are.
func (t *Tape) WriteFile(path, key string) error {
	f, err := os.Create(path)
	if err != nil {
		return &Error{Kind: KindConfig, Msg: "cannot create cassette: " + err.Error()}
	}
	rec := &recorder{f: f, w: bufio.NewWriter(f), key: key}
	if err := rec.line(cassetteHeader{Cassette: "forge-lsp", Version: cassetteVersion}); err != nil {
		f.Close()
		return err
	}
	for _, ex := range t.snapshot() {
		ex.Request = json.RawMessage(ex.canon)
		if !json.Valid(ex.Request) {
			b, _ := json.Marshal(ex.canon)
			ex.Request = b
		}
		if err := rec.line(ex); err != nil {
			f.Close()
			return err
		}
	}
	return rec.Close()
}

// Retake says how a client re-runs a prompt from an earlier run's tape.
type Retake struct {
	// Prior is the tape of the run before; each request is answered from
	// its first unused exchange with the same method, endpoint and body
	// (the envelope nonce aside), as a replay would.
	Prior *Tape
	// Record receives every exchange of this run, answered from Prior or
	// live.
	Record *Tape
	// Live opens the live client for a request Prior cannot answer; nil
	// means offline: such a request fails with the first difference from
	// the nearest recorded request.
	Live func() (*Client, error)
	// Diverged, when set, is called once, at the first request Prior
	// cannot answer, with how it differs from the nearest one recorded.
	Diverged func(d *Divergence)
}

// retake is a Retake in use.
type retake struct {
	Retake
	prior *replayer

	once    sync.Once
	live    *Client
	liveErr error
	div     sync.Once
}

// NewRetake returns a client that answers from r.Prior while the run's
// requests match it and from r.Live after, recording every exchange on
// r.Record. Tool results are answered and recorded the same way
// (ReplayTool, RecordTool).
func NewRetake(r Retake) *Client {
	if r.Record == nil {
		r.Record = &Tape{}
	}
	ex := r.Prior.snapshot()
	rt := &retake{Retake: r, prior: &replayer{path: "the previous run", exchanges: ex, used: make([]bool, len(ex))}}
	c := New(Config{BaseURL: replayBase})
	c.retake = rt
	return c
}

func (r *retake) openLive() (*Client, error) {
	r.once.Do(func() {
		if r.Live == nil {
			return
		}
		r.live, r.liveErr = r.Live()
		if r.live != nil {
			r.live.tape = r.Record
		}
	})
	return r.live, r.liveErr
}

func (r *retake) diverged(err error) {
	ge, ok := err.(*Error)
	if !ok || ge.Divergence == nil || r.Diverged == nil {
		return
	}
	r.div.Do(func() { r.Diverged(ge.Divergence) })
}

// do answers one exchange from the prior tape, else live.
func (r *retake) do(ctx context.Context, c *Client, method, endpoint string, body []byte, timeout time.Duration, limit int64) ([]byte, error) {
	status, resp, err := r.prior.serve(method, endpoint, body)
	if err == nil {
		r.Record.add(method, endpoint, body, status, resp)
		return c.finish(endpoint, status, resp, limit)
	}
	r.diverged(err)
	if r.Live == nil {
		if ge, ok := err.(*Error); ok {
			ge.Msg = "offline re-run: " + ge.Msg + "; launch without \"offline\" to make the changed calls live"
		}
		return nil, err
	}
	lc, lerr := r.openLive()
	if lerr != nil {
		return nil, lerr
	}
	if lc == nil {
		return nil, err
	}
	return lc.do(ctx, method, endpoint, body, timeout, limit)
}

// tool answers a local tool call from the prior tape, recording the
// answer on this run's tape.
func (r *retake) tool(tool, arguments string) (res ToolResult, ok bool) {
	req, _ := json.Marshal(toolRequest{Tool: tool, Arguments: arguments})
	res, ok = r.prior.tool(tool, req)
	if ok {
		resp, _ := json.Marshal(res)
		r.Record.add(toolMethod, toolEndpoint+tool, req, 200, resp)
	}
	return res, ok
}

// tool answers a tool call from the first unused matching exchange.
func (r *replayer) tool(tool string, req []byte) (res ToolResult, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := canonical(req)
	for i := range r.exchanges {
		ex := &r.exchanges[i]
		if r.used[i] || ex.Method != toolMethod || ex.Endpoint != toolEndpoint+tool || ex.canon != want {
			continue
		}
		if json.Unmarshal([]byte(ex.Response), &res) != nil {
			return ToolResult{}, false
		}
		r.used[i] = true
		return res, true
	}
	return res, false
}

// Retaking reports whether c re-runs from a tape (NewRetake).
func (c *Client) Retaking() bool { return c != nil && c.retake != nil }

// Offline reports whether c makes no live calls: a replay, or a retake
// without a live client.
func (c *Client) Offline() bool {
	return c != nil && (c.replay != nil || c.retake != nil && c.retake.Live == nil)
}

// String is the divergence in one line, for a console.
func (d *Divergence) String() string {
	if d.Recorded == "" {
		return fmt.Sprintf("request %d (%s %s) is new: the previous run made no further such request", d.Request, d.Method, d.Endpoint)
	}
	return fmt.Sprintf("request %d (%s %s) changed %s", d.Request, d.Method, d.Endpoint, firstDiff(d.Recorded, d.Sent))
}

// Carry is the tape a next retake starts from: this run's exchanges, then
// those of the prior tape it did not ask for (a run stopped part way, or
// stepped back, keeps the calls of the runs before it). nil for a client
// that is not retaking.
func (c *Client) Carry() *Tape {
	if c == nil || c.retake == nil {
		return nil
	}
	r := c.retake
	out := &Tape{exchanges: r.Record.snapshot()}
	r.prior.mu.Lock()
	defer r.prior.mu.Unlock()
	for i, ex := range r.prior.exchanges {
		if !r.prior.used[i] {
			out.exchanges = append(out.exchanges, ex)
		}
	}
	for i := range out.exchanges {
		out.exchanges[i].Seq = i + 1
	}
	return out
}
