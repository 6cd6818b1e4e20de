// Package mountutil prepares mount points, cleans up stale mounts, unmounts,
// handles signals and runs a mount in the background.
package mountutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Prepare checks that dir can be mounted on: it exists, is a directory, and
// is empty unless allowNonEmpty. A stale FUSE mount at dir (its server gone:
// "transport endpoint is not connected") is detached first.
func Prepare(dir string, allowNonEmpty bool) error {
	if err := cleanStale(dir); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("mountpoint %s: not a directory", dir)
	}
	if allowNonEmpty {
		return nil
	}
	empty, err := isEmpty(dir)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	if !empty {
		return fmt.Errorf("mountpoint %s: not empty (use --allow-non-empty to mount over it)", dir)
	}
	return nil
}

// IsStale reports whether dir is a mount whose FUSE server is gone. It asks
// statfs, which the kernel never answers from its caches.
func IsStale(dir string) bool {
	var st syscall.Statfs_t
	return errors.Is(syscall.Statfs(dir, &st), syscall.ENOTCONN)
}

func cleanStale(dir string) error {
	if !IsStale(dir) {
		return nil
	}
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("mountpoint %s: stale mount (transport endpoint is not connected) could not be detached: %w", dir, err)
	}
	return nil
}

func isEmpty(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

// Unmount unmounts dir, detaching it lazily if it is busy.
func Unmount(dir string) error {
	err := syscall.Unmount(dir, 0)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EBUSY) {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount %s: %w", dir, err)
		}
		return nil
	}
	return fmt.Errorf("unmount %s: %w", dir, err)
}
