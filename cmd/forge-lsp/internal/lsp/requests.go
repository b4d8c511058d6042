package lsp

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"go.lsp.dev/protocol"
)

// Requests on one document (hover, completion, code actions, pulled
// diagnostics, ...) run in three steps so that slow work never holds the
// server lock and one document's slow work never delays another's
// requests:
//
//  1. in order with the other messages, under s.mu and cheap: the
//     document's current version is pinned (pinDoc);
//  2. in the request's goroutine, without s.mu: the version is parsed if
//     needed and the derived data the method declares (needs) are
//     computed into the snapshot's memos, the tool catalog read, the
//     files document links name looked up;
//  3. the handler runs, still without s.mu, against the pinned snapshot
//     (promptAt, snap.feat): a snapshot never changes and its memos are
//     computed once whoever asks, so a slow feature on one document holds
//     up nothing else (TestSlowFeatureBlocksNoOtherDocument). A handler
//     that reads server state besides the pin (the workspace's closed
//     files) takes s.mu for that read only.
//
// Notifications and the other requests run in order under s.mu, as
// dispatch says.

// needs are the derived data a document method uses, made ready in step 2.
type needs uint8

const (
	needFindings needs = 1 << iota // the analysis (snapshot.findings)
	needSemantic                   // the full semantic tokens
	needBudgets                    // the prose budgets (and the catalog)
	needCatalog                    // the tool catalog
	// needBudgetFindings: the prose budgets when a model catalog is
	// known, for the context-budget findings (diagnosticsOf).
	needBudgetFindings
	// needLinks: the document links (files looked up on disk).
	needLinks
	// needFlow: the flow analysis (the run-section lenses).
	needFlow
)

// docMethod marks a request handler as a document method that needs n.
func docMethod(m method, n needs) method {
	m.doc, m.needs = true, n
	return m
}

// allDocsMethod marks a request handler that reads every open document
// (workspace symbols): all are pinned in message order and parsed
// outside s.mu before it runs.
func allDocsMethod(m method) method {
	m.allDocs = true
	return m
}

// requestPin is what a document request works with.
type requestPin struct {
	key  string
	snap *snapshot // nil when the document is not open
	// links are the document links, set when the method needs them.
	links []documentLinkResult
	// all are the open documents' snapshots by key, for allDocsMethod.
	all map[string]*snapshot
	// roots are the workspace folders when the request arrived.
	roots []string
}

type pinCtxKey struct{}

func withPin(ctx context.Context, p *requestPin) context.Context {
	return context.WithValue(ctx, pinCtxKey{}, p)
}

func pinOf(ctx context.Context) *requestPin {
	p, _ := ctx.Value(pinCtxKey{}).(*requestPin)
	return p
}

// uriProbes counts docURIOf's decodes (a test checks that notifications
// are not probed).
var uriProbes atomic.Int64

// docURIOfRequest is docURIOf for a call of a document method (m.doc),
// and false without reading params for anything else.
func docURIOfRequest(m method, isCall bool, params json.RawMessage) (protocol.DocumentURI, bool) {
	if !m.doc || !isCall {
		return "", false
	}
	return docURIOf(params)
}

// docURIOf reads the document a request is about: params.textDocument.uri,
// or params.item.uri (call hierarchy).
func docURIOf(raw json.RawMessage) (protocol.DocumentURI, bool) {
	uriProbes.Add(1)
	var p struct {
		TextDocument struct {
			URI protocol.DocumentURI `json:"uri"`
		} `json:"textDocument"`
		Item struct {
			URI protocol.DocumentURI `json:"uri"`
		} `json:"item"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return "", false
	}
	if p.TextDocument.URI != "" {
		return p.TextDocument.URI, true
	}
	return p.Item.URI, p.Item.URI != ""
}

// prepare is step 2: the pinned version's snapshot and the data n names,
// all computed outside s.mu.
func (s *server) prepare(ctx context.Context, uri protocol.DocumentURI, pin *docPin, n needs, roots []string) *requestPin {
	rp := &requestPin{key: uriKey(uri), roots: roots}
	if pin == nil {
		return rp
	}
	snap := s.ready(*pin)
	rp.snap = snap
	if n&needBudgetFindings != 0 && len(snap.models) > 0 {
		n |= needBudgets
	}
	if !snap.isPrompt || snap.prompt == nil {
		return rp
	}
	if n&(needCatalog|needBudgets|needFindings) != 0 {
		snap.inputs() // the configuration and the tool catalog, resolved once
	}
	// The symbol index every navigation feature reads is built here,
	// once per snapshot, not under the lock by the first handler.
	snap.index()
	if n&needFindings != 0 {
		s.analyse(ctx, snap)
	}
	if n&needFlow != 0 {
		snap.flowResult()
	}
	if n&needSemantic != 0 {
		snap.semanticTokens()
	}
	if n&needBudgets != 0 {
		snap.proseBudgets()
	}
	if n&needLinks != 0 {
		rp.links = documentLinks(snap, roots)
	}
	return rp
}

// prepareAll readies the pinned snapshots of every open document outside
// s.mu.
func (s *server) prepareAll(pins map[string]docPin) *requestPin {
	rp := &requestPin{all: make(map[string]*snapshot, len(pins))}
	for key, pin := range pins {
		rp.all[key] = s.ready(pin)
	}
	return rp
}
