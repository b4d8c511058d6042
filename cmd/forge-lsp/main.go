// Command forge-lsp is the PromptForge toolchain: a language server
// (serve), a checker for CI (check), a runner (run), a test runner (test),
// a debug adapter (dap) and version, as its usage text lists.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/cli"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/dap"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/lsp"
	"github.com/forge-lsp/forge-lsp/cmd/forge-lsp/internal/mcp"
)

const usage = `forge-lsp: tooling for PromptForge prompts

usage:
  forge-lsp serve                       language server over stdio (default when stdin is not a terminal)
  forge-lsp check [flags] PATH...       check prompt files and folders
  forge-lsp run [flags] FILE [INPUT]    run a prompt; result on stdout
  forge-lsp dap                         debug adapter (Debug Adapter Protocol) over stdio
  forge-lsp test [flags] [PATH...]      run prompt test cases (NAME.test.yaml) from their cassettes
  forge-lsp render [flags] PROMPT       show what the model will see: each round's messages, tools, tokens, cost
  forge-lsp render --diff REV [PATH...] the same, compared with git revision REV (docs/review.md)
  forge-lsp fmt [-w | --check | --diff] PATH...
                                        format prompts: Lua fences as StyLua does, prose untouched
  forge-lsp gateway serve [FILE | --profile NAME]
                                        serve a gateway file as an OpenAI-compatible model gateway
  forge-lsp mcp [--stdio | --http ADDR] [prompts.toml | DIR]
                                        serve prompts to agents over MCP (docs/mcp.md)
  forge-lsp version [--json]            print the version, commit and build date

Run 'forge-lsp <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
			return lsp.Main(context.Background(), currentBuild().Version, nil)
		}
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return lsp.Main(context.Background(), currentBuild().Version, args[1:])
	case "check":
		return cli.CheckProcess(args[1:], os.Stdout, os.Stderr)
	case "run":
		return cli.Run(args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "dap":
		return dap.Main(args[1:])
	case "test":
		return cli.Test(args[1:], os.Stdout, os.Stderr)
	case "render":
		return cli.Render(args[1:], os.Stdout, os.Stderr)
	case "fmt":
		return cli.Fmt(args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "gateway":
		return cli.Gateway(args[1:], os.Stdout, os.Stderr)
	case "mcp":
		return mcp.Main(args[1:], currentBuild().Version, os.Stdin, os.Stdout, os.Stderr)
	case "version", "--version", "-v":
		return versionCmd(args[1:], os.Stdout, os.Stderr)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "forge-lsp: unknown command %q\n\n%s", args[0], usage)
	return 2
}
