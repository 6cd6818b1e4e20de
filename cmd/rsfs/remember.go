package main

import (
	"fmt"
	"path/filepath"

	"rsfs/remember"
)

// stateDir is where rsfs remembers the Source at rawURL: its catalog
// snapshot and its disk cache of blocks. "" when remembering is off. The
// directory is named by the Source's canonical URL (remember.Key); one an
// earlier rsfs named by the URL as typed is moved there first.
func (mf *mountFlags) stateDir(rawURL string) (string, error) {
	base := stateBase(mf.cacheDir)
	dir, err := remember.Dir(base, rawURL)
	if err != nil {
		return "", fmt.Errorf("--cache-dir: %w", err)
	}
	if legacy, err := remember.LegacyDir(base, rawURL); err == nil {
		migrateStateDir(legacy, dir)
	}
	return dir, nil
}

// stateBase is the directory that holds the state directories: --cache-dir,
// or the user's cache directory's rsfs (root's under systemd: /var/cache).
// remember.None stays None.
func stateBase(cacheDir string) string {
	if cacheDir == "" {
		if d, err := userCacheDir(); err == nil {
			return filepath.Join(d, "rsfs") // remember.Dir's default, or root's under systemd
		}
	}
	return cacheDir
}
