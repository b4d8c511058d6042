package lsp

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// retainServer starts a server whose documents may keep budget bytes
// (debounce d for changes) and returns its client and the server.
func retainServer(t *testing.T, budget int64, d time.Duration) (*testClient, *server) {
	var srv *server
	testHookServer = func(s *server) { srv = s }
	t.Cleanup(func() { testHookServer = nil })
	c := startServer(t, options{Debounce: d, RetainBudget: budget})
	c.initialize(nil)
	return c, srv
}

// kept returns which of uris keep a snapshot or a parse Reuse, and the
// estimated retention of all open documents.
func kept(s *server, uris []string) (keep []string, total int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range uris {
		if d := s.docs[uriKey(protocol.DocumentURI(u))]; d != nil && (d.snap != nil || d.reuse != nil) {
			keep = append(keep, u)
		}
	}
	for _, d := range s.docs {
		total += d.retained()
	}
	return keep, total
}

// TestRetainLeastRecentlyUsed: five prompts of the same size open in a
// server whose budget holds three; the two used least recently lose
// their snapshots and parse Reuse, the budget holds after every store,
// and a document used again (a request) is kept in place of the then
// least recently used one.
func TestRetainLeastRecentlyUsed(t *testing.T) {
	text := benchPrompt(60, 1)
	per := retainedPerByte * int64(len(text))
	budget := 3*per + per/2
	c, srv := retainServer(t, budget, -1)
	var uris []string
	for i := range 5 {
		u := fmt.Sprintf("file:///retain/p%d.md", i)
		uris = append(uris, u)
		c.open(u, text)
		c.diagnosticsFor(u, 1, 0)
		if _, total := kept(srv, uris); total > budget {
			t.Fatalf("after opening %d documents they retain %d bytes, budget %d", i+1, total, budget)
		}
	}
	if got, want := first(kept(srv, uris)), uris[2:]; !slices.Equal(got, want) {
		t.Fatalf("kept %v, want the three used last %v", got, want)
	}
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uris[0]}}, &syms)
	if len(syms) == 0 {
		t.Fatal("no symbols")
	}
	if got, want := first(kept(srv, uris)), []string{uris[0], uris[3], uris[4]}; !slices.Equal(got, want) {
		t.Fatalf("after a request on %s kept %v, want %v", uris[0], got, want)
	}
}

// TestRetainKeepsPending: a document with an edit waiting for its
// analysis keeps its parse Reuse (the edit's parse takes it) however
// many documents are opened after it, and is not counted out of the
// budget: the others are dropped instead.
func TestRetainKeepsPending(t *testing.T) {
	text := benchPrompt(60, 2)
	per := retainedPerByte * int64(len(text))
	budget := 2*per + per/2
	uris := []string{"file:///retain/pending.md", "file:///retain/a.md", "file:///retain/b.md", "file:///retain/c.md"}
	// The edit's analysis stays queued: the hook holds it until the test
	// ends (it would otherwise start at once, inside the hour's delay).
	// The server's stop ends it; the hook is cleared after that.
	t.Cleanup(func() { testHookQueued = nil })
	testHookQueued = func(ctx context.Context, u protocol.DocumentURI, v int32) {
		if string(u) == uris[0] && v == 2 {
			<-ctx.Done()
		}
	}
	c, srv := retainServer(t, budget, time.Hour)
	c.open(uris[0], text)
	c.diagnosticsFor(uris[0], 1, 0)
	c.change(uris[0], 2, text+"\nMore prose.\n")
	for _, u := range uris[1:] {
		c.open(u, text)
		c.diagnosticsFor(u, 1, 0)
	}
	got, _ := kept(srv, uris)
	if want := []string{uris[0], uris[3]}; !slices.Equal(got, want) {
		t.Fatalf("kept %v, want the pending document and the last one opened %v", got, want)
	}
	srv.mu.Lock()
	pending := srv.docs[uriKey(protocol.DocumentURI(uris[0]))]
	ok := pending.reuse != nil && !pending.current(pending.snap)
	srv.mu.Unlock()
	if !ok {
		t.Fatal("the pending document lost its Reuse or is not pending")
	}
}

func first[A, B any](a A, _ B) A { return a }
