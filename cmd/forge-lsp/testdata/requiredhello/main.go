// Command requiredhello is a BenchmarkStartup baseline: a hello-world that
// links only the libraries forge-lsp is required to build on (the LSP
// protocol and JSON-RPC libraries, gopher-lua, goldmark, YAML) and
// net/http, which the model gateway speaks. Their package initialisation
// runs in every program that links them, so this program's start-up is
// the floor of forge-lsp's.
package main

import (
	"fmt"

	_ "github.com/yuin/goldmark/parser"
	_ "github.com/yuin/gopher-lua"
	_ "go.lsp.dev/jsonrpc2"
	_ "go.lsp.dev/protocol"
	_ "go.yaml.in/yaml/v3"
	_ "net/http"
)

func main() { fmt.Println("hello") }
