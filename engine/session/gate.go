package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/toolrule"
	"github.com/forge-lsp/forge-lsp/engine/tools"
)

// LiveToolsHint is how a host tells the user to let a replay run tools;
// hosts put their own flag or setting in it (Options.LiveToolsHint).
const LiveToolsHint = "pass --live-tools to run them on this machine"

// ErrToolNotReplayed is wrapped by the error of a replayed tool call that
// the cassette holds no result for and that would have run on this
// machine: the run stopped there, so a host reports it rather than the
// recorded exchanges left unused.
var ErrToolNotReplayed = errors.New("replay: a tool would have run on this machine")

// gated is a tool that runs code or reaches the network from this machine
// (a workspace command of forge-tools.json, web_fetch). A replay answers
// its calls from the cassette and never runs it unless the host allowed
// live tools; a recording writes each result to the cassette
// (docs/security.md#runs).
type gated struct {
	tools.Tool
	s *Session
}

// gate wraps the tools that act on this machine.
func (s *Session) gate(ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = &gated{Tool: t, s: s}
	}
	return out
}

func (g *gated) Call(ctx context.Context, arguments string) (tools.Output, error) {
	c, name := g.s.client, g.WireName()
	if res, ok := c.ReplayTool(name, arguments); ok {
		if res.Error != "" {
			return tools.Output{}, &tools.Error{Kind: tools.ErrorKind(res.ErrorKind), Msg: res.Error}
		}
		if res.Untrusted {
			return tools.Untrusted(res.Text), nil
		}
		return tools.Trusted(res.Text), nil
	}
	if c.Replaying() {
		if !g.s.liveTools {
			return tools.Output{}, &tools.Error{Kind: tools.ErrBackend, Msg: fmt.Sprintf(
				"replay: tool %s (%s) would run on this machine, and a replay runs no tools: the cassette holds no recorded result for this call; re-record with --record, or %s",
				name, describeTool(g.Tool), g.s.liveHint), Err: ErrToolNotReplayed}
		}
	}
	out, err := g.Tool.Call(ctx, arguments)
	if c.Recording() && !errors.Is(err, context.Canceled) {
		res := gateway.ToolResult{Text: out.Text(), Untrusted: out.IsUntrusted()}
		var te *tools.Error
		if err != nil {
			res = gateway.ToolResult{Error: err.Error(), ErrorKind: int(tools.ErrOther)}
			if errors.As(err, &te) {
				res.ErrorKind = int(te.Kind)
			}
		}
		if err == nil || te == nil || te.Kind != tools.ErrCancelled {
			c.RecordTool(name, arguments, res)
		}
	}
	return out, err
}

func describeTool(t tools.Tool) string {
	if t.ID() == toolrule.WebFetchID {
		return "the built-in web_fetch, which fetches a URL the model chose"
	}
	return "a workspace command of " + toolrule.WorkspaceFile
}
