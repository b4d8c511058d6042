package mcp

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"

	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	"github.com/forge-lsp/forge-lsp/engine/trace"
)

// AttrPrompt names the catalog prompt an MCP run ran.
const AttrPrompt = "promptforge.mcp.prompt"

// startSpans starts the run span of one run_prompt call and returns the
// observer that also records its span tree (docs/observability.md); with
// export off it returns obs and nil.
func (s *Server) startSpans(e *Entry, obs run.Observer) (run.Observer, *telemetry.Run) {
	spans := s.tel.StartRun(context.Background(), e.Path, e.Name,
		attribute.String(telemetry.AttrHost, "mcp"), attribute.String(AttrPrompt, e.Name))
	if spans == nil {
		return obs, nil
	}
	return trace.Multi(obs, spans), spans
}

// errRefused ends the span of a run that never got a slot.
var errRefused = errors.New("refused: no run slot came free")
