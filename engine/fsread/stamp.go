package fsread

import (
	"os"
	"time"
)

// Stamp is a file's size and modification time: a host that keeps what
// it read from a file (the debugger's re-runs of one prompt) stats it
// and reads it again only when its stamp changed.
type Stamp struct {
	Size    int64
	ModTime time.Time
}

// RacyWindow is how recent a modification time is too recent to vouch
// for a file's contents: a file system's clock may not tick between two
// writes (a jiffy on Linux, 2 s on FAT), so a file changed twice within
// it, to the same size, would keep its stamp.
const RacyWindow = 2 * time.Second

// StampOf returns path's stamp; ok is false when the stamp cannot vouch
// for the contents: path is not a regular file, cannot be stat'ed, or
// was modified within RacyWindow of now.
func StampOf(path string) (st Stamp, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return Stamp{}, false
	}
	st = Stamp{Size: fi.Size(), ModTime: fi.ModTime()}
	return st, time.Since(st.ModTime) >= RacyWindow
}

// StatStamp returns path's stamp whatever kind of file it is (a folder's
// modification time changes when an entry is created, removed or renamed
// in it); ok is false when path cannot be stat'ed. Unlike StampOf it
// leaves judging a too recent stamp (RacyWindow) to the caller.
func StatStamp(path string) (st Stamp, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return Stamp{}, false
	}
	return Stamp{Size: fi.Size(), ModTime: fi.ModTime()}, true
}
