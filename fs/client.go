package fs

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"rsfs/mountutil"
	"rsfs/prefetch"
	"rsfs/status"
)

// This file is the client side of the extended attributes: what a program
// (rsfs warm, poll, status) asks a mount through them.

// GetxattrAll reads attribute name of path whatever its size.
func GetxattrAll(path, name string) ([]byte, error) {
	buf := make([]byte, 1<<16)
	for {
		n, err := syscall.Getxattr(path, name, buf)
		switch {
		case err == nil:
			return buf[:n], nil
		case errors.Is(err, syscall.ERANGE) && len(buf) < 1<<24:
			buf = make([]byte, 4*len(buf))
		default:
			return nil, err
		}
	}
}

// ReadStatus reads the status attribute of the mount's root at dir
// (status.Report's JSON), and words why it cannot.
func ReadStatus(dir string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := GetxattrAll(abs, XattrStatus)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, syscall.ENODATA), errors.Is(err, syscall.ENOTSUP):
		return nil, fmt.Errorf("%s is not the root of an rsfs mount", abs)
	case errors.Is(err, syscall.ENOTCONN):
		return nil, fmt.Errorf("%s: the rsfs serving it is gone (stale mount: umount it)", abs)
	}
	return nil, fmt.Errorf("status of %s: %w", abs, err)
}

// ReadReport reads and decodes the status of the mount at dir.
func ReadReport(dir string) (*status.Report, error) {
	data, err := ReadStatus(dir)
	if err != nil {
		return nil, err
	}
	var rep status.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("status of %s: %w", dir, err)
	}
	return &rep, nil
}

// AskPoll asks the mount at dir to poll now, and words why it cannot;
// the report says what the poll did. It reads the poll attribute of the mount's root: a size query, which polls
// and waits, then the answer it kept, on one thread (the mount keeps it
// for the reader that asked).
func AskPoll(dir string) (*status.PollNowReport, error) {
	data, err := askPollData(dir)
	if err != nil {
		return nil, err
	}
	var rep status.PollNowReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("poll of %s: %w", dir, err)
	}
	return &rep, nil
}

func askPollData(dir string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := askPoll(abs)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, syscall.ENODATA), errors.Is(err, syscall.ENOTSUP):
		if _, serr := ReadStatus(abs); serr == nil {
			return nil, fmt.Errorf("the rsfs mount at %s is older than rsfs poll: remount it", abs)
		}
		return nil, fmt.Errorf("%s is not the root of an rsfs mount", abs)
	case errors.Is(err, syscall.EPERM):
		return nil, fmt.Errorf("poll of %s: only the user the mount runs as, and root, may ask for a poll", abs)
	case errors.Is(err, syscall.ENOTCONN):
		return nil, fmt.Errorf("%s: the rsfs serving it is gone (stale mount: umount it)", abs)
	default:
		return nil, fmt.Errorf("poll of %s: %w", abs, err)
	}
}

func askPoll(dir string) ([]byte, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n, err := syscall.Getxattr(dir, XattrPoll, nil)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if n, err = syscall.Getxattr(dir, XattrPoll, buf); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// ErrNotInMount is what InMount's error is when the path is not inside an
// rsfs mount, or is no path at all.
var ErrNotInMount = errors.New("not inside an rsfs mount")

// notInMount is an error of InMount that is the caller's: its text, and
// ErrNotInMount.
type notInMount struct{ err error }

func (e notInMount) Error() string   { return e.err.Error() }
func (e notInMount) Unwrap() []error { return []error{e.err, ErrNotInMount} }

// InMount is p's absolute path, if it is inside an rsfs mount: one that
// is not (or that does not exist) is ErrNotInMount; a stale mount is said.
func InMount(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", notInMount{err}
	}
	if _, err := os.Lstat(abs); err != nil {
		return "", notInMount{err}
	}
	_, err = GetxattrAll(abs, XattrCached)
	switch {
	case err == nil:
		return abs, nil
	case errors.Is(err, syscall.ENODATA), errors.Is(err, syscall.ENOTSUP):
		return "", notInMount{fmt.Errorf("%s is not inside an rsfs mount", p)}
	case errors.Is(err, syscall.ENOTCONN):
		return "", fmt.Errorf("%s: the rsfs serving it is gone (stale mount: umount it)", p)
	}
	return "", fmt.Errorf("%s: %w", p, err)
}

// Warming is a warm job under Path (absolute, inside a mount), as the
// mount last said it (Read): asking starts it.
type Warming struct {
	Path string
	ID   string
	Job  prefetch.Job
}

// NewWarming is a warm job of path, with an ID of its own.
func NewWarming(path string) *Warming {
	var b [8]byte
	rand.Read(b[:])
	return &Warming{Path: path, ID: hex.EncodeToString(b[:])}
}

// Read reads the job as the mount has it now.
func (w *Warming) Read() error {
	data, err := GetxattrAll(w.Path, XattrWarmPrefix+w.ID)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, &w.Job)
}

// WatchWarmings reads each unfinished job of ws every interval, calling
// show after each round, until all have finished; it stops at the first
// that cannot be read, and says which (its index).
func WatchWarmings(ws []*Warming, every time.Duration, show func()) (int, error) {
	for {
		done := true
		for i, w := range ws {
			if w.Job.Finished {
				continue
			}
			if err := w.Read(); err != nil {
				return i, err
			}
			done = done && w.Job.Finished
		}
		show()
		if done {
			return 0, nil
		}
		time.Sleep(every)
	}
}

// HoldStatus is mountutil.StatusFunc: what the status of the mount at dir
// says of its hold.
func HoldStatus(dir string) (mountutil.HoldStatus, error) {
	rep, err := ReadReport(dir)
	if err != nil {
		return mountutil.HoldStatus{}, err
	}
	st := mountutil.HoldStatus{File: rep.HoldFile, PID: rep.PID}
	if rep.Hold != nil {
		st.Until = rep.Hold.Until
	}
	return st, nil
}
