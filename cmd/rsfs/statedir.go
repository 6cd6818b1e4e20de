package main

import (
	"errors"
	"fmt"

	"rsfs/statedir"
)

// defaultCacheTotalMax bounds the state directories under one --cache-dir
// together: each holds up to --cache-max-size (10 GiB) of disk cache, and
// a user who mounts many Sources in turn would otherwise fill the disk.
const defaultCacheTotalMax = "40GiB"

// stateDir is where rsfs remembers the Source at rawURL (statedir.Resolve);
// "" when remembering is off.
func (mf *mountFlags) stateDir(rawURL string) (string, error) {
	dir, err := statedir.Resolve(mf.cacheDir, rawURL)
	if err != nil {
		return "", fmt.Errorf("--cache-dir: %w", err)
	}
	return dir, nil
}

// lockState takes the Source's state directory for this mount on dir
// (statedir.Take).
func lockState(mf *mountFlags, rawURL, dir string) (*statedir.Lock, error) {
	stateDir, err := mf.stateDir(rawURL)
	if err != nil {
		return nil, err
	}
	l, err := statedir.Take(stateDir, dir, rawURL, mf.sizes.cacheTotal)
	var locked *statedir.LockedError
	if errors.As(err, &locked) {
		return nil, fmt.Errorf("%w: unmount it first, or mount with another --cache-dir (or --cache-dir none)", err)
	}
	return l, err
}
