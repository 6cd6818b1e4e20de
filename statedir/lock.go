package statedir

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"rsfs/mountutil"
)

// closingWait bounds how long a mount waits for an earlier mount of the
// same state directory that is unmounted but still finishing (saving its
// snapshot, writing queued blocks to the disk cache, unsubscribing), so
// that "umount DIR && rsfs mount URL DIR" works.
const closingWait = time.Minute

// Lock is a Source's state directory, held by one mount.
type Lock struct {
	l   *mountutil.DirLock
	dir string
}

// Take takes the state directory dir of the Source at rawURL for the mount
// on mountPoint until Release (or exit): a second mount of the same Source
// with the same --cache-dir is refused, rather than sharing the snapshot
// and the disk cache. An earlier mount that is unmounted and closing is
// waited for. Once held, it records the Source's URL there (WriteURL) and,
// in the background, keeps the state directories beside it within
// totalMax (autoPrune). With dir "" (remembering off) it holds nothing.
func Take(dir, mountPoint, rawURL string, totalMax int64) (*Lock, error) {
	if dir == "" {
		return &Lock{}, nil
	}
	waiting := func(e *mountutil.LockedError) {
		slog.Info("waiting for the previous mount of this Source to finish closing", "pid", e.PID, "unmounted_from", e.Owner, "state_dir", e.Dir, "at_most", closingWait)
	}
	l, err := mountutil.LockDirWait(dir, mountPoint, closingWait, waiting)
	var locked *mountutil.LockedError
	if errors.As(err, &locked) {
		return nil, fmt.Errorf("state directory %w: unmount it first, or mount with another --cache-dir (or --cache-dir none)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := WriteURL(dir, rawURL); err != nil {
		slog.Warn("recording the Source's URL in its state directory", "err", err)
	}
	go autoPrune(filepath.Dir(dir), dir, totalMax)
	return &Lock{l: l, dir: dir}, nil
}

// Closing records that this mount is unmounted and only finishing, so a
// new mount of the Source waits for it instead of being refused.
func (s *Lock) Closing() {
	if s.l == nil {
		return
	}
	if err := s.l.MarkClosing(); err != nil {
		slog.Warn("marking the state directory as closing", "err", err)
	}
}

// Release lets the state directory go, its lock naming no process.
func (s *Lock) Release() {
	if s.l == nil {
		return
	}
	if err := s.l.Release(); err != nil {
		slog.Warn("releasing the state directory", "err", err)
	}
}

// Abandon lets the state directory go after a mount that failed: one that
// remembers no Source (no snapshot, no feed state: the failed mount made
// it, or an earlier rsfs's failed mount left it) is removed, as a prune
// removes one; any other is Released.
func (s *Lock) Abandon() {
	if s.l == nil || remembers(s.dir) {
		s.Release()
		return
	}
	gone := filepath.Join(filepath.Dir(s.dir), ".failed-"+filepath.Base(s.dir)+"-"+strconv.Itoa(os.Getpid()))
	err := os.Rename(s.dir, gone)
	if err == nil {
		err = os.RemoveAll(gone)
	}
	_ = s.l.Close()
	if err != nil {
		slog.Warn("removing the state directory of a mount that failed", "state_dir", s.dir, "err", err)
	}
}

// remembers reports whether the state directory dir holds what a loaded
// Source left: a catalog snapshot or a feed's state.
func remembers(dir string) bool {
	for _, p := range []string{SnapshotPath(dir), FeedPath(dir)} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
