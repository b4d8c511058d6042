package lsp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// TestDiagnosticsDelayConfig pins how diagnosticsDelay (milliseconds) is
// read from initializationOptions and workspace/configuration: flat or
// under "forge", later sources win, unusable values mean the server's
// default, and a huge delay is capped.
func TestDiagnosticsDelayConfig(t *testing.T) {
	s := newServer(options{})
	if got := s.debounce(); got != defaultDebounce || defaultDebounce > 100*time.Millisecond {
		t.Fatalf("default delay %v (defaultDebounce %v), want at most 100ms", got, defaultDebounce)
	}
	for _, tc := range []struct {
		json string
		want time.Duration
	}{
		{`{"diagnosticsDelay": 0}`, 0},
		{`{"forge": {"diagnosticsDelay": 40}}`, 40 * time.Millisecond},
		{`{"diagnosticsDelay": 12.5}`, 12500 * time.Microsecond},
		{`{"diagnosticsDelay": -5}`, defaultDebounce},
		{`{"diagnosticsDelay": "fast"}`, defaultDebounce},
		{`{"diagnosticsDelay": 1e12}`, maxDiagnosticsDelay},
		{`{"gatewayUrl": "http://x/v1"}`, defaultDebounce},
	} {
		s := newServer(options{})
		s.setConfig(s.cfg.merge(configFromJSON(json.RawMessage(tc.json))))
		if got := s.debounce(); got != tc.want {
			t.Errorf("%s: delay %v, want %v", tc.json, got, tc.want)
		}
	}
	// A later source without the key keeps the earlier value.
	s = newServer(options{})
	s.setConfig(s.cfg.merge(configFromJSON(json.RawMessage(`{"diagnosticsDelay": 30}`))).merge(configFromJSON(json.RawMessage(`{"toolsFile": "t.json"}`))))
	if got := s.debounce(); got != 30*time.Millisecond {
		t.Errorf("after a merge without the key: %v, want 30ms", got)
	}
}

// TestDiagnosticsDelaySetting: a server whose own delay is an hour
// publishes an edit's diagnostics promptly once the client's
// initializationOptions set diagnosticsDelay to 0.
func TestDiagnosticsDelaySetting(t *testing.T) {
	c := startServer(t, options{Debounce: time.Hour})
	c.initialize(map[string]any{"diagnosticsDelay": 0})
	uri := "file:///delay/a.md"
	ch := publishWaiter(c, uri)
	c.open(uri, tinyPrompt)
	c.change(uri, 2, brokenPrompt)
	deadline := time.After(30 * time.Second) // failure bound only
	for {
		select {
		case p := <-ch:
			if p.Version != 2 {
				continue
			}
			if !strings.Contains(mustJSON(p.Diagnostics), "unknown-section") {
				t.Fatalf("version 2's diagnostics: %s", mustJSON(p.Diagnostics))
			}
			return
		case <-deadline:
			t.Fatal("no diagnostics for the edit: the diagnosticsDelay setting was not applied")
		}
	}
}

// TestPullDiagnosticsSkipDebounce: a pull right after an edit answers
// with that version's findings at once, although the background analysis
// waits an hour.
func TestPullDiagnosticsSkipDebounce(t *testing.T) {
	c := startServer(t, options{Debounce: time.Hour})
	c.textDocumentCaps = map[string]any{"diagnostic": map[string]any{}}
	c.initialize(nil)
	uri := "file:///delay/b.md"
	c.open(uri, tinyPrompt)
	c.change(uri, 2, brokenPrompt)
	within(t, 30*time.Second, "a pull during the debounce", func() {
		if rep := pullDiagnostics(c, uri); !strings.Contains(mustJSON(rep.Items), "unknown-section") {
			t.Errorf("pulled diagnostics of version 2: %s", mustJSON(rep.Items))
		}
	})
}

// TestAnalysisRunsInsideDelay: the delay holds back publishing, not the
// analysis. With an hour's delay an edit's analysis still finishes (on an
// idle server, at once), and nothing is published for it meanwhile.
func TestAnalysisRunsInsideDelay(t *testing.T) {
	uri := "file:///delay/early.md"
	analysed := make(chan int32, 8)
	testHookAnalysed = func(u protocol.DocumentURI, v int32) {
		if string(u) == uri {
			analysed <- v
		}
	}
	t.Cleanup(func() { testHookAnalysed = nil })
	c := startServer(t, options{Debounce: time.Hour})
	c.initialize(nil)
	ch := publishWaiter(c, uri)
	c.open(uri, tinyPrompt)
	c.change(uri, 2, brokenPrompt)
	deadline := time.After(30 * time.Second) // failure bound only
	for v := int32(0); v != 2; {
		select {
		case v = <-analysed:
		case <-deadline:
			t.Fatal("version 2 was not analysed inside its delay")
		}
	}
	for {
		select {
		case p := <-ch:
			if p.Version == 2 {
				t.Fatalf("version 2 was published before its delay passed: %s", mustJSON(p.Diagnostics))
			}
			continue
		default:
		}
		break
	}
}

// TestBurstWaitsForPause: a change after a pause is analysed at once;
// one that follows it within the delay (typing faster than the delay)
// waits until the document has been quiet for half the delay, at most
// maxSettle (raised here to an hour), so a burst is not analysed once
// per keystroke.
func TestBurstWaitsForPause(t *testing.T) {
	uri := "file:///delay/burst.md"
	settle := maxSettle
	t.Cleanup(func() { testHookQueued, maxSettle = nil, settle }) // after the server stops
	maxSettle = time.Hour
	queued := make(chan int32, 8)
	testHookQueued = func(_ context.Context, u protocol.DocumentURI, v int32) {
		if string(u) == uri {
			queued <- v
		}
	}
	c := startServer(t, options{Debounce: time.Hour})
	c.textDocumentCaps = map[string]any{"diagnostic": map[string]any{}}
	c.initialize(nil)
	c.open(uri, tinyPrompt)
	c.change(uri, 2, tinyPrompt+"\nMore prose.\n")
	deadline := time.After(30 * time.Second) // failure bound only
	for v := int32(0); v != 2; {
		select {
		case v = <-queued:
		case <-deadline:
			t.Fatal("the change after a pause was not analysed inside its delay")
		}
	}
	c.change(uri, 3, brokenPrompt)
	// The pull analyses version 3 itself, after the change was applied;
	// by then a job that did not wait would have asked for a slot.
	if rep := pullDiagnostics(c, uri); !strings.Contains(mustJSON(rep.Items), "unknown-section") {
		t.Fatalf("pulled diagnostics of version 3: %s", mustJSON(rep.Items))
	}
	select {
	case v := <-queued:
		t.Fatalf("version %d, inside a burst, was analysed without waiting for a pause", v)
	default:
	}
}
