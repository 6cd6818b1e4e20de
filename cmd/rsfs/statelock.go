package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"rsfs/mountutil"
	"rsfs/remember"
)

// closingWait bounds how long a mount waits for an earlier mount of the
// same state directory that is unmounted but still finishing (saving its
// snapshot, writing queued blocks to the disk cache, unsubscribing), so
// that "umount DIR && rsfs mount URL DIR" works.
const closingWait = time.Minute

// stateLock is the Source's state directory, held by this mount.
type stateLock struct{ l *mountutil.DirLock }

// lockState takes the Source's state directory for this mount until
// release (or exit): a second mount of the same Source with the same
// --cache-dir is refused, rather than sharing the snapshot and the disk
// cache. An earlier mount that is unmounted and closing is waited for.
func lockState(mf *mountFlags, rawURL, dir string) (*stateLock, error) {
	stateDir, err := mf.stateDir(rawURL)
	if err != nil || stateDir == "" {
		return &stateLock{}, err
	}
	waiting := func(e *mountutil.LockedError) {
		slog.Info("waiting for the previous mount of this Source to finish closing", "pid", e.PID, "unmounted_from", e.Owner, "state_dir", e.Dir, "at_most", closingWait)
	}
	l, err := mountutil.LockDirWait(stateDir, dir, closingWait, waiting)
	var locked *mountutil.LockedError
	if errors.As(err, &locked) {
		return nil, fmt.Errorf("state directory %w: unmount it first, or mount with another --cache-dir (or --cache-dir none)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := remember.WriteURL(stateDir, rawURL); err != nil {
		slog.Warn("recording the Source's URL in its state directory", "err", err)
	}
	go autoPrune(filepath.Dir(stateDir), stateDir, mf.sizes.cacheTotal)
	return &stateLock{l: l}, nil
}

// closing records that this mount is unmounted and only finishing, so a
// new mount of the Source waits for it instead of being refused.
func (s *stateLock) closing() {
	if s.l == nil {
		return
	}
	if err := s.l.MarkClosing(); err != nil {
		slog.Warn("marking the state directory as closing", "err", err)
	}
}

// release lets the state directory go.
func (s *stateLock) release() {
	if s.l != nil {
		_ = s.l.Close()
	}
}
