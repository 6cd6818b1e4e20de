package mountutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockName is the lock file in a locked directory. It holds the PID and
// the mount point of the process that holds it, and "closing" once that
// process's file system is unmounted.
const lockName = "lock"

// closingMark is the record's third line once the holder is closing.
const closingMark = "closing"

// DirLock is a directory held by this process (see LockDir).
type DirLock struct {
	f     *os.File
	owner string
}

// MarkClosing records that the holder's file system is unmounted and the
// process is only finishing its work (saving state, writing its disk
// cache) before it exits: LockDirWait then waits for it rather than
// refusing.
func (l *DirLock) MarkClosing() error {
	// The record only grows, so a reader sees it whole, with or without
	// the mark.
	if _, err := l.f.WriteAt([]byte(recordText(l.owner)+closingMark+"\n"), 0); err != nil {
		return fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	return nil
}

// Close releases the directory. Exiting releases it too, however the
// process ends.
func (l *DirLock) Close() error { return l.f.Close() }

// Release empties the record, then releases the directory, so that the
// lock file never names a process that is gone (LockDir's holder, at the
// end of its mount; a probe of TryLockDir wrote no record and just Closes).
func (l *DirLock) Release() error {
	err := l.f.Truncate(0)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	return nil
}

// LockedError says that another process holds a directory.
type LockedError struct {
	Dir string
	// PID and Owner (its mount point) are what the holder recorded: 0 and
	// "" if it has not yet.
	PID   int
	Owner string
	// Closing says the holder is unmounted and finishing (MarkClosing).
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

// LockDir takes dir (created if missing) for this process, with flock(2)
// on dir/lock, and records this process's PID and owner (its mount point)
// there. If another process holds it, the error is a *LockedError naming
// that process.
func LockDir(dir, owner string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
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
	if err := record(f, owner); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return &DirLock{f: f, owner: owner}, nil
}

// closingPoll is how often LockDirWait tries a closing holder's lock.
const closingPoll = 50 * time.Millisecond

// probeWait bounds how long LockDirWait waits for a holder that names no
// live process: a tool listing or pruning the directories (TryLockDir)
// holds each lock for a moment, and writes no record.
const probeWait = 2 * time.Second

// LockDirWait is LockDir, except that a holder that is closing (its file
// system unmounted, the process finishing before it exits) is waited for,
// up to wait; waiting, if not nil, is called once when the wait begins. A
// holder that is still mounted is refused at once, as by LockDir; one still
// closing after wait is refused with its *LockedError. A holder that names
// no live process is a probe (TryLockDir, of rsfs cache list or a prune),
// tried again for up to probeWait.
func LockDirWait(dir, owner string, wait time.Duration, waiting func(*LockedError)) (*DirLock, error) {
	start := time.Now()
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
			if time.Since(start) > probeWait {
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

// alive reports whether the process pid exists (0: none was recorded).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// record writes "PID\nOWNER\n" into the held lock file.
func record(f *os.File, owner string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(recordText(owner)), 0)
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
