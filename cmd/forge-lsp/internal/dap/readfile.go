package dap

import (
	"fmt"
	"io"
	"os"
)

// maxPromptBytes bounds what the adapter reads of a prompt file.
const maxPromptBytes = 16 << 20

// readPrompt reads a prompt file for the request loop: only a regular
// file, at most maxPromptBytes. A named pipe, a device or a folder is
// refused at once, never waited on: the open does not block (see
// openNoBlock) and the type is checked on the opened file.
func readPrompt(path string) ([]byte, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): a prompt is a file", path, kindOf(fi.Mode()))
	}
	if fi.Size() > maxPromptBytes {
		return nil, fmt.Errorf("%s has %d bytes, over the limit of %d bytes for a prompt", path, fi.Size(), maxPromptBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPromptBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPromptBytes {
		return nil, fmt.Errorf("%s is over the limit of %d bytes for a prompt", path, maxPromptBytes)
	}
	return data, nil
}

func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
