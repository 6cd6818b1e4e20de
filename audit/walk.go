package audit

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"syscall"
	"time"

	"rsfs/catalog"
	"rsfs/fs"
	"rsfs/resourcesync"
)

// shown is what a live mount shows: its files as a catalog of records by
// URI, and the path each URI is shown at.
type shown struct {
	cat   *catalog.Catalog
	paths map[string]string
}

// pathOf is the path the mount shows uri at; the URI itself when it shows
// none.
func (s *shown) pathOf(uri string) string {
	if p, ok := s.paths[uri]; ok {
		return p
	}
	return uri
}

// walk reads every file the mount at root (of origin) shows: its URI,
// hashes and lastmod from its extended attributes, its size from stat.
func walk(root, origin string) (*shown, error) {
	s := &shown{cat: catalog.New(catalog.Options{Origin: origin}), paths: map[string]string{}}
	err := filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		r, err := fileOf(p, d)
		if err != nil {
			return err
		}
		if err := s.cat.Add(r); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		s.paths[r.URI] = filepath.ToSlash(rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking the mount: %w", err)
	}
	if err := s.cat.Seal(); err != nil { // the catalog answers by URI once sealed
		return nil, fmt.Errorf("walking the mount: %w", err)
	}
	return s, nil
}

// fileOf is the record of the file at p as the mount shows it.
func fileOf(p string, d iofs.DirEntry) (*catalog.Resource, error) {
	fi, err := d.Info()
	if err != nil {
		return nil, err
	}
	r := &catalog.Resource{Length: fi.Size()}
	if r.URI, err = getxattr(p, fs.XattrURI); err != nil {
		return nil, err
	}
	h, err := getxattr(p, fs.XattrHash)
	if err != nil {
		return nil, err
	}
	if h != "" {
		if r.Hashes, _, err = resourcesync.ParseHashes(h); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", p, fs.XattrHash, err)
		}
	}
	lm, err := getxattr(p, fs.XattrLastmod)
	if err != nil {
		return nil, err
	}
	if lm != "" { // none published: the mount shows the epoch, the record none
		if r.Lastmod, err = time.Parse(time.RFC3339Nano, lm); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", p, fs.XattrLastmod, err)
		}
	}
	return r, nil
}

// getxattr reads an extended attribute; "" when the file has none.
func getxattr(path, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := syscall.Getxattr(path, name, buf)
		switch {
		case err == nil:
			return string(buf[:n]), nil
		case errors.Is(err, syscall.ERANGE) && len(buf) < 1<<20:
			buf = make([]byte, 4*len(buf))
		case errors.Is(err, syscall.ENODATA):
			return "", nil
		default:
			return "", fmt.Errorf("%s: %s: %w", path, name, err)
		}
	}
}
