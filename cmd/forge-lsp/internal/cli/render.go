package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/forge-lsp/forge-lsp/engine/gateway"
	"github.com/forge-lsp/forge-lsp/engine/render"
)

const renderUsage = `usage: forge-lsp render [flags] PROMPT
       forge-lsp render --diff REV [flags] [PATH...]

Shows what the model will see, without calling a model or a tool: each
model round the run would make, with the messages, the tools (descriptions
and schemas) and the model as the engine would send them, and their input
tokens and cost. What the run does not know before it starts shows as a
named slot: the run input (⟨args⟩) and each model reply (⟨reply of ## X⟩).
With --diff, compares the prompts at git revision REV with the working
tree, round by round (docs/review.md).

Exit status: 0 rendered, 1 a prompt cannot be rendered, 2 usage error.

flags:
`

type renderFlags struct {
	section, input, format, gatewayConfig, diff string
	hasInput                                    bool
}

func parseRenderArgs(args []string, stdout, stderr io.Writer) (f renderFlags, pos []string, help, ok bool) {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.StringVar(&f.section, "section", "", `render the H1, then only this section (e.g. "## Name")`)
	fs.Func("input", "the run input (Lua `args`); without it the input shows as the slot ⟨args⟩", func(s string) error {
		f.input, f.hasInput = s, true
		return nil
	})
	fs.StringVar(&f.format, "format", render.FormatText, "output format: text, markdown or json")
	fs.StringVar(&f.gatewayConfig, "gateway-config", "", "bind models from the gateway file FILE's [[model]]s, with their prices (docs/gateway.md; default $"+gateway.EnvConfig+"); nothing is sent anywhere")
	fs.StringVar(&f.diff, "diff", "", "compare the prompts at git revision REV with the working tree")
	pos, help, ok = parseAnywhere(fs, args, renderUsage, stdout, stderr)
	if !ok {
		return f, nil, help, false
	}
	switch f.format {
	case render.FormatText, render.FormatMarkdown, render.FormatJSON:
	default:
		fmt.Fprintf(stderr, "forge-lsp render: unknown --format %q (text, markdown or json)\n", f.format)
		return f, nil, false, false
	}
	if f.diff == "" && len(pos) != 1 {
		printUsage(fs, renderUsage, stderr)
		return f, nil, false, false
	}
	if f.gatewayConfig == "" {
		f.gatewayConfig = os.Getenv(gateway.EnvConfig)
	}
	return f, pos, false, true
}

// Render implements `forge-lsp render`.
func Render(args []string, stdout, stderr io.Writer) int {
	fl, pos, help, ok := parseRenderArgs(args, stdout, stderr)
	if help {
		return exitOK
	}
	if !ok {
		return exitUsage
	}
	if fl.diff != "" {
		return renderDiff(fl, pos, stdout, stderr)
	}
	path := pos[0]
	src, err := readRegular(path)
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp render: %v\n", err)
		return exitUsage
	}
	res, err := render.Render(context.Background(), fl.options(path, src))
	if err != nil {
		fmt.Fprintf(stderr, "forge-lsp render: %s: %v\n", path, err)
		return exitRunError
	}
	if err := render.Write(stdout, res, fl.format); err != nil {
		fmt.Fprintf(stderr, "forge-lsp render: %v\n", err)
		return exitRunError
	}
	return exitOK
}

// options are the render options of one prompt.
func (fl renderFlags) options(path string, src []byte) render.Options {
	o := render.Options{Path: path, Source: src, Section: fl.section, GatewayFile: fl.gatewayConfig,
		ToolsDir: filepath.Dir(path), Env: os.LookupEnv}
	if fl.hasInput {
		in := fl.input
		o.Input = &in
	}
	return o
}
