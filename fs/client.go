package fs

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"runtime"
	"syscall"
	"time"

	"rsfs/prefetch"
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

// AskPoll reads the poll attribute of the mount's root at dir: a size
// query, which polls and waits, then the answer it kept, on one thread
// (the mount keeps it for the reader that asked).
func AskPoll(dir string) ([]byte, error) {
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
