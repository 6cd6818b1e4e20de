// Package atomicfile writes a file so that a reader, or the next mount
// after a crash, sees either the old file or the whole new one: the bytes
// go to a temporary file in the same directory, which is synced, renamed
// over the path, and the directory synced so the rename itself is durable.
// It is rsfs's one way to write state: catalog snapshots, an Atom-PMH
// feed's state, and holds.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Option sets something of the temporary file before it is renamed to
// path.
type Option func(*os.File) error

// Owner makes the file belong to uid and gid, for a file written for
// another user (a hold, by root, in a mount's directory).
func Owner(uid, gid int) Option {
	return func(f *os.File) error { return f.Chown(uid, gid) }
}

// Write runs write into a temporary file beside path, applies opts to it,
// and renames it to path. On any failure path is left as it was and the
// temporary file is removed. The file is created with mode 0600.
func Write(path string, write func(io.Writer) error, opts ...Option) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	for _, o := range opts {
		if err = o(tmp); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir)
}

// WriteBytes writes data to path atomically, as Write does.
func WriteBytes(path string, data []byte, opts ...Option) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, opts...)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
