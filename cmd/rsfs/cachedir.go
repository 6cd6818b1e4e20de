package main

import (
	"os"
	"path/filepath"
)

// userCacheDir is os.UserCacheDir, except that root without $HOME or
// $XDG_CACHE_HOME (a mount started by systemd from /etc/fstab, whose
// manager sets neither) gets /var/cache.
func userCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil && os.Getuid() == 0 {
		return filepath.Join("/var", "cache"), nil
	}
	return dir, err
}
