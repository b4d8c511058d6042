package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// argCaps is the largest size, in bytes, of each string argument of the
// tools (docs/mcp.md#limits). A name is short; a path is a path; the texts
// are bounded by what the engine reads elsewhere (a prompt's 4 MiB) and by
// the 16 MiB message. An argument not listed has defaultArgCap.
var argCaps = map[string]int{
	"prompt":      256,
	"run_id":      256,
	"cursor":      256,
	"name":        256,
	"run":         1024,
	"capability":  maxCapability,
	"path":        4096,
	"input_file":  4096,
	"output_file": 4096,
	"text":        4 << 20,
	"args":        8 << 20,
	"input_text":  8 << 20,
}

const defaultArgCap = 4096

// capMiddleware refuses a tools/call with a string argument over its cap
// before any tool sees it, so no handler does work in proportion to an
// argument it cannot use (a 200,000-character name to look up).
func (s *Server) capMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && p != nil {
				if err := checkArgCaps(p.Name, p.Arguments); err != nil {
					return nil, err
				}
			}
		}
		return next(ctx, method, req)
	}
}

// checkArgCaps is the cap check of one call's arguments.
func checkArgCaps(tool string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return nil // the SDK's schema check answers it
	}
	for name, v := range args {
		if len(v) == 0 || v[0] != '"' {
			continue
		}
		if tool == "need_prompt" && name == "capability" {
			// need_prompt answers it itself, as upstream does: a result
			// the calling model can act on.
			continue
		}
		limit, ok := argCaps[name]
		if !ok {
			limit = defaultArgCap
		}
		// The JSON spelling is at least as long as the string; decode only
		// when it is over.
		if len(v) <= limit+2 {
			continue
		}
		var str string
		if json.Unmarshal(v, &str) != nil || len(str) <= limit {
			continue
		}
		return invalidParams("%s: argument %q is %d bytes, over its %s limit; %s", tool, name, len(str), humanBytes(limit), capHint(name))
	}
	return nil
}

func capHint(name string) string {
	switch name {
	case "args", "input_text":
		return "pass a large input as input_file"
	case "text":
		return "check the saved file by path, or split the prompt"
	}
	return "shorten it"
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}
