package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/run"
)

// symbolic is the render's gateway and observer in one: an
// http.RoundTripper that records every chat request and answers it with a
// slot naming the entry that asked, and the run observer that tells it
// which entry is running. The run is sequential (one fanout arm at a
// time), so the innermost entered entry is the one asking.
type symbolic struct {
	mu      sync.Mutex
	entries []run.SectionEvent
	// replies counts the rounds of each entry (by sys.id) for the slot
	// names of its later rounds.
	replies map[int64]int
	rounds  []*Round
}

func newSymbolic() *symbolic { return &symbolic{replies: map[int64]int{}} }

// RoundTrip answers POST …/chat/completions; every other request fails
// (render passes the catalog to the run, and no tool is ever called).
func (s *symbolic) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return answer(req, http.StatusNotFound, `{"error":{"message":"render answers chat completions only"}}`), nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	var decoded gateway.Request
	if err := json.Unmarshal(body, &decoded); err != nil {
		return nil, fmt.Errorf("render: undecodable chat request: %w", err)
	}
	s.mu.Lock()
	rd := &Round{N: len(s.rounds) + 1, Request: decoded, Body: string(body), Round: 1}
	var id int64
	if n := len(s.entries); n > 0 {
		ev := s.entries[n-1]
		rd.Section, rd.Arm, rd.Depth, id = sectionAddress(ev), ev.Index, ev.Depth, ev.ID
	}
	s.replies[id]++
	rd.Reply = replySlot(rd.Section, rd.Arm, s.replies[id])
	if len(decoded.Tools) > 0 || hasSystemGuide(decoded) {
		rd.Note = "tools are offered: when the model calls them, the loop sends their results and asks again; those later rounds depend on the replies and are not shown"
	}
	s.rounds = append(s.rounds, rd)
	s.mu.Unlock()
	out, _ := json.Marshal(map[string]any{
		"id": "render", "object": "chat.completion", "model": decoded.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rd.Reply}}},
	})
	return answer(req, http.StatusOK, string(out)), nil
}

// hasSystemGuide reports an emulated-tools request (a system message in
// front, no tools field).
func hasSystemGuide(r gateway.Request) bool {
	return len(r.Messages) > 0 && r.Messages[0].Role == "system" && len(r.Tools) == 0
}

// replySlot names the reply of an entry's n-th round.
func replySlot(section string, arm, n int) string {
	what := "reply"
	if n > 1 {
		what = fmt.Sprintf("reply %d", n)
	}
	where := section
	if arm > 0 {
		where = fmt.Sprintf("%s, arm %d", section, arm)
	}
	return SlotOpen + what + " of " + where + SlotClose
}

func answer(req *http.Request, status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader([]byte(body))),
		ContentLength: int64(len(body)), Request: req}
}

func (s *symbolic) SectionEnter(ev run.SectionEvent) {
	s.mu.Lock()
	s.entries = append(s.entries, ev)
	s.mu.Unlock()
}

func (s *symbolic) SectionExit(ev run.SectionEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.entries) - 1; i >= 0; i-- {
		if s.entries[i].ID == ev.ID {
			s.entries = append(s.entries[:i], s.entries[i+1:]...)
			return
		}
	}
}

// ModelRound completes the round just answered with what only the run
// knows: the prose line, the round within the block, models.infer.
func (s *symbolic) ModelRound(ev run.ModelRoundEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rounds) == 0 {
		return
	}
	rd := s.rounds[len(s.rounds)-1]
	rd.Line, rd.Round, rd.Infer = ev.Line, ev.Round, ev.Infer
}

func (s *symbolic) ToolCall(run.ToolCallEvent) {}
func (s *symbolic) Log(run.LogEvent)           {}
