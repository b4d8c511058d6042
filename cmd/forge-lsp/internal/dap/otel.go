package dap

import (
	"context"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/forge-lsp/forge-lsp/engine/run"
	"github.com/forge-lsp/forge-lsp/engine/telemetry"
	"github.com/forge-lsp/forge-lsp/engine/trace"
)

// startSpans starts the run span of one debugged run and returns the
// observer that also records its span tree (docs/observability.md); with
// export off it returns d itself and nil.
func (d *debugRun) startSpans(ahead bool) (run.Observer, *telemetry.Run) {
	if ahead {
		// A run started ahead of a step back may never be seen: it
		// exports nothing (ahead.go).
		return d, nil
	}
	path := d.args.Program
	spans := d.s.opts.Telemetry.StartRun(context.Background(), path, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		attribute.String(telemetry.AttrHost, "dap"))
	if spans == nil {
		return d, nil
	}
	return trace.Multi(d, spans), spans
}
