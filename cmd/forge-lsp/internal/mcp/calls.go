package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
)

// calls tracks, per HTTP session, the JSON-RPC requests whose POST is
// still open, so that a client that goes away cancels them. The SDK keeps
// a call running after its POST's connection drops (its result then goes
// nowhere) and ends a session on DELETE only once every call returns; a
// run slot held that way starves every other client
// (docs/mcp.md#admission-deadlines-and-cancellation).
// Cancelling is what the client itself would send:
// notifications/cancelled for each request, handed to the SDK.
type calls struct {
	mcp http.Handler
	mu  sync.Mutex
	// open holds, per session id, the raw ids of the requests in flight
	// and how many POSTs carry each.
	open map[string]map[string]int
}

func newCalls(h http.Handler) *calls {
	return &calls{mcp: h, open: map[string]map[string]int{}}
}

// requestIDs are the ids of the requests (not notifications or
// responses) in a POST body: one message or a batch.
func requestIDs(body []byte) []string {
	var msgs []json.RawMessage
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		_ = json.Unmarshal(body, &msgs)
	} else {
		msgs = []json.RawMessage{body}
	}
	var ids []string
	for _, m := range msgs {
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if json.Unmarshal(m, &head) != nil || head.Method == nil || len(head.ID) == 0 || string(head.ID) == "null" {
			continue
		}
		ids = append(ids, string(head.ID))
	}
	return ids
}

func (c *calls) add(sid string, ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.open[sid]
	if m == nil {
		m = map[string]int{}
		c.open[sid] = m
	}
	for _, id := range ids {
		m[id]++
	}
}

func (c *calls) done(sid string, ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.open[sid]
	for _, id := range ids {
		if m[id]--; m[id] <= 0 {
			delete(m, id)
		}
	}
	if len(m) == 0 {
		delete(c.open, sid)
	}
}

// all is every request in flight in session sid.
func (c *calls) all(sid string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for id := range c.open[sid] {
		ids = append(ids, id)
	}
	return ids
}

// serve hands a POST to the SDK and cancels its requests when the client
// goes away before they are answered.
func (c *calls) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	sid := r.Header.Get("Mcp-Session-Id")
	ids := requestIDs(body)
	if sid == "" || len(ids) == 0 {
		c.mcp.ServeHTTP(w, r)
		return
	}
	c.add(sid, ids)
	c.mcp.ServeHTTP(w, r)
	c.done(sid, ids)
	if r.Context().Err() != nil {
		c.cancel(r, sid, ids, "the client disconnected")
	}
}

// deleteSession cancels the session's requests in flight, then lets the
// SDK end it (which waits for them).
func (c *calls) deleteSession(w http.ResponseWriter, r *http.Request) {
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		c.cancel(r, sid, c.all(sid), "the client ended the session")
	}
	c.mcp.ServeHTTP(w, r)
}

// cancel sends the SDK notifications/cancelled for ids in session sid, as
// the client would have.
func (c *calls) cancel(orig *http.Request, sid string, ids []string, reason string) {
	for _, id := range ids {
		b, _ := json.Marshal(map[string]any{
			"jsonrpc": "2.0", "method": "notifications/cancelled",
			"params": map[string]any{"requestId": json.RawMessage(id), "reason": reason},
		})
		req, err := http.NewRequestWithContext(context.WithoutCancel(orig.Context()), http.MethodPost, orig.URL.String(), bytes.NewReader(b))
		if err != nil {
			continue
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		if v := orig.Header.Get("Mcp-Protocol-Version"); v != "" {
			req.Header.Set("Mcp-Protocol-Version", v)
		}
		c.mcp.ServeHTTP(discardResponse{h: http.Header{}}, req)
	}
}

// discardResponse is the ResponseWriter of a request the server makes to
// itself.
type discardResponse struct{ h http.Header }

func (d discardResponse) Header() http.Header         { return d.h }
func (d discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d discardResponse) WriteHeader(int)             {}
