package session

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/forge-lsp/forge-lsp/engine/fsread"
	"github.com/forge-lsp/forge-lsp/engine/store"
)

// MaxSeedBytes caps the total size of a store seed folder.
const MaxSeedBytes = 64 << 20

// SeedStore returns a store holding the regular files under dir, each at
// its slash-separated path relative to dir (`forge-lsp run --store`, the
// debugger's `store` setting). Symbolic links are not followed. A file
// whose path is not a valid store path, or that exceeds the store's
// limits, is an error naming it. Each file is read through fsread (its
// cap is fsread.StoreSeed's) and the folder as a whole may hold at most
// MaxSeedBytes (docs/security.md#reads).
func SeedStore(dir string) (*store.Store, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	st := store.New()
	var total int64
	err = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := fsread.ReadFile(p, fsread.StoreSeed)
		if err != nil {
			return err
		}
		if total += int64(len(data)); total > MaxSeedBytes {
			return fmt.Errorf("store folder %s holds more than %d bytes (the limit for a seeded store) at %s; seed a smaller folder", dir, MaxSeedBytes, p)
		}
		if err := st.Write(filepath.ToSlash(rel), string(data)); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}
