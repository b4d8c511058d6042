// Command depshello is a BenchmarkStartup baseline: a hello-world that
// links every third-party library forge-lsp links, so that their package
// initialisation (which no change to forge-lsp can make lazy) is measured
// apart from forge-lsp's own.
package main

import (
	"fmt"

	_ "github.com/agnivade/levenshtein"
	_ "github.com/goccy/go-json"
	_ "github.com/google/go-dap"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/pkoukk/tiktoken-go-loader/assets"
	_ "github.com/yuin/goldmark/parser"
	_ "github.com/yuin/gopher-lua"
	_ "go.lsp.dev/jsonrpc2"
	_ "go.lsp.dev/protocol"
	_ "go.yaml.in/yaml/v3"
	_ "net/http"
)

func main() { fmt.Println("hello") }
