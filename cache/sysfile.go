package cache

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The disk cache's files are opened, read and written with plain system
// calls: an os.File would also register each file with the poller and set
// its flags (four more calls per file, which for a small file's block cost
// more than its write; issue 42).

// openFile opens path with flags (O_CLOEXEC added), retrying an
// interrupted call.
func openFile(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC, 0o644)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// createFile opens path for writing, created or truncated; its directory
// is made again if it went away.
func createFile(path string) (int, error) {
	const flags = syscall.O_WRONLY | syscall.O_CREAT | syscall.O_TRUNC
	fd, err := openFile(path, flags)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			fd, err = openFile(path, flags)
		}
	}
	return fd, err
}

// pwriteAll writes all of b to fd at off.
func pwriteAll(fd int, b []byte, off int64) error {
	return fullAt(syscall.Pwrite, fd, b, off, io.ErrShortWrite)
}

// preadFull fills b from fd at off.
func preadFull(fd int, b []byte, off int64) error {
	return fullAt(syscall.Pread, fd, b, off, io.ErrUnexpectedEOF)
}

// fullAt calls op (pread or pwrite) until all of b is done, retrying an
// interrupted call; a call that moves nothing fails with short.
func fullAt(op func(int, []byte, int64) (int, error), fd int, b []byte, off int64, short error) error {
	for len(b) > 0 {
		n, err := op(fd, b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return short
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}
