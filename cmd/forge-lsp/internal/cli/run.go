package cli

import (
	"fmt"
	"io"
)

// Run implements `forge-lsp run`. (Owned by the runtime work; stub.)
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "forge-lsp run: not implemented yet")
	return 2
}
