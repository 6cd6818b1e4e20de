package statedir

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The lock of a state directory is flock(2) on its file lockName, which
// holds the PID and the mount point of the mount that holds it, and
// "closing" once that mount's file system is unmounted. Exiting releases
// it, however the process ends. A mount takes it (Take); a tool that lists
// or removes state directories probes it for a moment (probe), and writes
// no record.
const lockName = "lock"

// closingMark is the record's third line once the holder is closing.
const closingMark = "closing"

// closingWait bounds how long a mount waits for an earlier mount of the
// same state directory that is unmounted but still finishing (saving its
// snapshot, writing queued blocks to the disk cache, unsubscribing), so
// that "umount DIR && rsfs mount URL DIR" works.
const closingWait = time.Minute

// closingPoll is how often a mount tries a closing holder's lock.
const closingPoll = 50 * time.Millisecond

// probeWait bounds how long a mount waits for a holder that names no live
// process: a tool listing or pruning the directories (probe) holds each
// lock for a moment, and writes no record.
const probeWait = 2 * time.Second

// Lock is a state directory held by this process: by a mount (Take,
// LockDir), or by a probe.
type Lock struct {
	f     *os.File // nil: remembering is off, nothing is held
	dir   string
	owner string // the mount point recorded; "" for a probe
}

// LockedError says that another process holds a state directory.
type LockedError struct {
	Dir string
	// PID and Owner (its mount point) are what the holder recorded: 0 and
	// "" if it has not yet.
	PID   int
	Owner string
	// Closing says the holder is unmounted and finishing (Lock.Closing).
	Closing bool
}

func (e *LockedError) Error() string {
	switch {
	case e.PID == 0:
		return fmt.Sprintf("%s is in use by another rsfs mount", e.Dir)
	case e.Closing:
		return fmt.Sprintf("%s is in use by an rsfs mount that is closing (pid %d, unmounted from %s)", e.Dir, e.PID, e.Owner)
	}
	return fmt.Sprintf("%s is in use by another rsfs mount (pid %d, on %s)", e.Dir, e.PID, e.Owner)
}

// Take takes the state directory dir of the Source at rawURL for the mount
// on mountPoint until Release (or exit): a second mount of the same Source
// with the same cache directory is refused with a *LockedError, rather
// than sharing the snapshot and the disk cache. An earlier mount that is
// unmounted and closing is waited for. Once held, it records the Source's
// URL there (WriteURL) and, in the background, keeps the state directories
// beside it within totalMax (autoPrune). With dir "" (remembering off) it
// holds nothing.
func Take(dir, mountPoint, rawURL string, totalMax int64) (*Lock, error) {
	if dir == "" {
		return &Lock{}, nil
	}
	waiting := func(e *LockedError) {
		slog.Info("waiting for the previous mount of this Source to finish closing", "pid", e.PID, "unmounted_from", e.Owner, "state_dir", e.Dir, "at_most", closingWait)
	}
	l, err := lockWait(dir, mountPoint, closingWait, waiting)
	var locked *LockedError
	if errors.As(err, &locked) {
		return nil, fmt.Errorf("state directory %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := WriteURL(dir, rawURL); err != nil {
		slog.Warn("recording the Source's URL in its state directory", "err", err)
	}
	go autoPrune(filepath.Dir(dir), dir, totalMax)
	return l, nil
}

// LockDir takes dir (created if missing) for this process, and records
// this process's PID and owner (its mount point) there. If another process
// holds it, the error is a *LockedError naming that process.
func LockDir(dir, owner string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	l, err := flockDir(dir)
	if err != nil {
		return nil, err
	}
	l.owner = owner
	if err := l.record(); err != nil {
		l.close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return l, nil
}

// lockWait is LockDir, except that a holder that is closing (its file
// system unmounted, the process finishing before it exits) is waited for,
// up to wait; waiting, if not nil, is called once when the wait begins. A
// holder that is still mounted is refused at once, as by LockDir; one still
// closing after wait is refused with its *LockedError. A holder that names
// no live process is a probe, tried again for up to probeWait.
func lockWait(dir, owner string, wait time.Duration, waiting func(*LockedError)) (*Lock, error) {
	start := time.Now()
	var probeSince time.Time // when the holder was first seen naming no live process
	for announced := false; ; {
		l, err := LockDir(dir, owner)
		var locked *LockedError
		if !errors.As(err, &locked) {
			return l, err
		}
		switch {
		case !locked.Closing && alive(locked.PID):
			return nil, err
		case !locked.Closing:
			// A probe, or a closing holder between emptying its record
			// and letting go (Release): waited for from when it was first
			// seen so, not from the start of a wait for a closing mount.
			if probeSince.IsZero() {
				probeSince = time.Now()
			}
			if time.Since(probeSince) > probeWait {
				return nil, err
			}
		case time.Since(start) > wait:
			return nil, fmt.Errorf("still closing after %s: %w", wait, err)
		case !announced && waiting != nil:
			waiting(locked)
			announced = true
		}
		time.Sleep(closingPoll)
	}
}

// probe takes dir, which must exist, for this process like LockDir, but
// writes no record into its lock file (so what the last holder wrote
// stays) and creates nothing but a missing lock file: for a tool that looks
// at, or removes, a directory no mount holds. If a process holds it, the
// error is a *LockedError naming that process. Let it go with close.
func probe(dir string) (*Lock, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return flockDir(dir)
}

// flockDir takes dir's lock file (created if missing) with flock(2).
func flockDir(dir string) (*Lock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, holder(dir, path)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return &Lock{f: f, dir: dir}, nil
}

// Closing records that this mount is unmounted and only finishing, so a
// new mount of the Source waits for it instead of being refused.
func (l *Lock) Closing() {
	if l.f == nil {
		return
	}
	// The record only grows, so a reader sees it whole, with or without
	// the mark.
	if _, err := l.f.WriteAt([]byte(recordText(l.owner)+closingMark+"\n"), 0); err != nil {
		slog.Warn("marking the state directory as closing", "err", fmt.Errorf("lock %s: %w", l.f.Name(), err))
	}
}

// Release lets the state directory go, its lock naming no process (an
// empty record), so that the lock file never names a process that is gone.
func (l *Lock) Release() {
	if l.f == nil {
		return
	}
	err := l.f.Truncate(0)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		slog.Warn("releasing the state directory", "err", fmt.Errorf("lock %s: %w", l.f.Name(), err))
	}
}

// close lets the directory go as it is, its record kept (a probe's, or
// one whose directory is gone).
func (l *Lock) close() {
	if l.f != nil {
		_ = l.f.Close()
	}
}

// Abandon lets the state directory go after a mount that failed: one that
// remembers no Source (no snapshot, no feed state: the failed mount made
// it, or an earlier rsfs's failed mount left it) is removed, as a prune
// removes one; any other is Released.
func (l *Lock) Abandon() {
	if l.f == nil || remembers(l.dir) {
		l.Release()
		return
	}
	gone := filepath.Join(filepath.Dir(l.dir), ".failed-"+filepath.Base(l.dir)+"-"+strconv.Itoa(os.Getpid()))
	err := os.Rename(l.dir, gone)
	if err == nil {
		err = os.RemoveAll(gone)
	}
	l.close()
	if err != nil {
		slog.Warn("removing the state directory of a mount that failed", "state_dir", l.dir, "err", err)
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

// alive reports whether the process pid exists (0: none was recorded).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// record writes this process's record, "PID\nOWNER\n", into the held
// lock file.
func (l *Lock) record() error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(recordText(l.owner)), 0)
	return err
}

// recordText is this process's record: its PID and owner, a line each.
func recordText(owner string) string {
	return strconv.Itoa(os.Getpid()) + "\n" + owner + "\n"
}

// holder reads what the process holding the lock recorded.
func holder(dir, path string) *LockedError {
	e := &LockedError{Dir: dir}
	data, err := os.ReadFile(path)
	if err != nil {
		return e
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 2 {
		return e
	}
	if n, err := strconv.Atoi(lines[0]); err == nil && n > 0 {
		e.PID, e.Owner = n, lines[1]
		e.Closing = len(lines) > 2 && lines[2] == closingMark
	}
	return e
}
