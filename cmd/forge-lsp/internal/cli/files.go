package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileBytes caps a prompt or test file that check and run read: the
// language server's analysis cap.
const MaxFileBytes = 4 << 20

// readRegular reads path when it is, after following links, a regular
// file of at most MaxFileBytes. Nothing else is opened: a named pipe in a
// checked folder would block the read forever, and a link to a device
// such as /dev/zero would fill memory.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have been replaced between the two looks.
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, tooLarge(path, int64(len(b)))
	}
	return b, nil
}

func checkRegular(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if !m.IsRegular() {
		kind := "a special file"
		switch {
		case m.IsDir():
			kind = "a directory"
		case m&fs.ModeNamedPipe != 0:
			kind = "a named pipe"
		case m&fs.ModeSocket != 0:
			kind = "a socket"
		case m&fs.ModeDevice != 0:
			kind = "a device"
		}
		return fmt.Errorf("%s is %s, not a regular file; only regular files are read", path, kind)
	}
	if fi.Size() > MaxFileBytes {
		return tooLarge(path, fi.Size())
	}
	return nil
}

func tooLarge(path string, n int64) error {
	return fmt.Errorf("%s is %d bytes, more than the %d-byte limit for a prompt; split it", path, n, MaxFileBytes)
}
