package cli

import "github.com/forge-lsp/forge-lsp/engine/fsread"

// MaxFileBytes caps a prompt or test file that check and run read: the
// language server's analysis cap.
const MaxFileBytes = 4 << 20

// readRegular reads a prompt through the one reader for repository files
// (docs/security.md#reads): a named pipe in a checked folder would block
// the read forever, and a link to a device such as /dev/zero would fill
// memory.
func readRegular(path string) ([]byte, error) {
	return fsread.ReadFile(path, fsread.Prompt)
}
