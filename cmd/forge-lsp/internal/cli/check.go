// Package cli implements the check and run subcommands.
package cli

import (
	"fmt"
	"io"
)

// Check implements `forge-lsp check`. (stub)
func Check(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "forge-lsp check: not implemented yet")
	return 2
}
