package main

import (
	"errors"
	"fmt"

	"rsfs/mountutil"
)

// lockState takes the Source's state directory for this mount until unlock
// (or exit): a second mount of the same Source with the same --cache-dir is
// refused, rather than sharing the snapshot and the disk cache.
func lockState(mf *mountFlags, rawURL, dir string) (unlock func(), err error) {
	stateDir, err := mf.stateDir(rawURL)
	if err != nil || stateDir == "" {
		return func() {}, err
	}
	l, err := mountutil.LockDir(stateDir, dir)
	var locked *mountutil.LockedError
	if errors.As(err, &locked) {
		return nil, fmt.Errorf("state directory %w: unmount it first, or mount with another --cache-dir (or --cache-dir none)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	return func() { _ = l.Close() }, nil
}
