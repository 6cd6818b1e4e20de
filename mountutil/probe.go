package mountutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// TryLockDir takes dir, which must exist, for this process like LockDir,
// but writes no record into its lock file (so what the last holder wrote
// stays) and creates nothing but a missing lock file: for a tool that looks
// at, or removes, a directory no mount holds. If a process holds it, the
// error is a *LockedError naming that process.
func TryLockDir(dir string) (*DirLock, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := flock(f); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, holder(dir, path)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return &DirLock{f: f}, nil
}
