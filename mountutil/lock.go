package mountutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockName is the lock file in a locked directory. It holds the PID and
// the mount point of the process that holds it.
const lockName = "lock"

// DirLock is a directory held by this process (see LockDir).
type DirLock struct{ f *os.File }

// Close releases the directory. Exiting releases it too, however the
// process ends.
func (l *DirLock) Close() error { return l.f.Close() }

// LockedError says that another process holds a directory.
type LockedError struct {
	Dir string
	// PID and Owner (its mount point) are what the holder recorded: 0 and
	// "" if it has not yet.
	PID   int
	Owner string
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("%s is in use by another rsfs mount", e.Dir)
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
	return &DirLock{f: f}, nil
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
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"+owner+"\n"), 0)
	return err
}

// holder reads what the process holding the lock recorded.
func holder(dir, path string) *LockedError {
	e := &LockedError{Dir: dir}
	data, err := os.ReadFile(path)
	if err != nil {
		return e
	}
	pid, owner, ok := strings.Cut(strings.TrimSuffix(string(data), "\n"), "\n")
	if !ok {
		return e
	}
	if n, err := strconv.Atoi(pid); err == nil && n > 0 {
		e.PID, e.Owner = n, owner
	}
	return e
}
