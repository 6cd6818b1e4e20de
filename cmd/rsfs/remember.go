package main

import (
	"fmt"
	"path/filepath"

	"rsfs/remember"
)

// stateDir is where rsfs remembers the Source at rawURL: its catalog
// snapshot and its disk cache of blocks. "" when remembering is off.
func (mf *mountFlags) stateDir(rawURL string) (string, error) {
	base := mf.cacheDir
	if base == "" {
		if d, err := userCacheDir(); err == nil {
			base = filepath.Join(d, "rsfs") // remember.Dir's default, or root's under systemd
		}
	}
	dir, err := remember.Dir(base, rawURL)
	if err != nil {
		return "", fmt.Errorf("--cache-dir: %w", err)
	}
	return dir, nil
}
