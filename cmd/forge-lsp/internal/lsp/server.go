// Package lsp is the forge-lsp language server.
package lsp

import (
	"context"
	"fmt"
	"os"
)

// Main serves LSP over stdio and returns the exit code. (stub)
func Main(ctx context.Context, version string, args []string) int {
	fmt.Fprintln(os.Stderr, "forge-lsp serve: not implemented yet")
	return 2
}
