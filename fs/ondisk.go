package fs

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/catalog"
	"rsfs/prefetch"
	"rsfs/status"
)

// XattrCached is the virtual extended attribute that says what of a node
// the disk cache holds: on a file "none", "partial N of M bytes" or
// "whole M bytes"; on a directory "N of M files, X of Y bytes on disk" for
// the files under it. It is not listed, so copying a tree's attributes
// does not copy it.
const XattrCached = "user.rsfs.cached"

// onDisk is what of the files under node id (a file or a directory) the
// disk cache holds, walking the subtree. Empty files count as on disk.
func (f *FS) onDisk(id catalog.NodeID) status.Coverage {
	var cov status.Coverage
	f.eachFile(id, func(v catalog.FileVersion) bool {
		cov.Files++
		cov.Bytes += v.Resource.Length
		have := f.cfg.Cache.OnDisk(prefetch.ContentOf(v))
		cov.BytesOnDisk += have
		if have >= v.Resource.Length {
			cov.FilesOnDisk++
		}
		return true
	})
	return cov
}

// OnDisk is what of the whole tree the disk cache holds, for `rsfs status`:
// a walk of the catalog (a hash per block), so it is taken again at most
// once a second (onDiskEvery).
func (f *FS) OnDisk() status.Coverage {
	c := &f.onDiskMemo
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) > onDiskEvery {
		c.cov, c.at = f.onDisk(catalog.RootID), time.Now()
	}
	return c.cov
}

const onDiskEvery = time.Second

// onDiskMemo is the last OnDisk.
type onDiskMemo struct {
	mu  sync.Mutex
	at  time.Time
	cov status.Coverage
}

// eachFile calls fn with the version of each file under id (id itself if
// it is a file), in tree order, until fn returns false; it reports whether
// it went through all of them.
func (f *FS) eachFile(id catalog.NodeID, fn func(catalog.FileVersion) bool) bool {
	if !id.IsDir() {
		v, ok := f.cfg.Catalog.Version(id)
		return !ok || fn(v)
	}
	more := true
	f.cfg.Catalog.ReadDir(id, func(_ string, cid catalog.NodeID, a catalog.Attr) bool {
		if a.Dir {
			more = f.eachFile(cid, fn)
			return more
		}
		if v, ok := f.cfg.Catalog.Version(cid); ok {
			more = fn(v)
		}
		return more
	})
	return more
}

// cachedText is the value of XattrCached for node id.
func (f *FS) cachedText(id catalog.NodeID) string {
	cov := f.onDisk(id)
	if id.IsDir() {
		return fmt.Sprintf("%d of %d files, %d of %d bytes on disk", cov.FilesOnDisk, cov.Files, cov.BytesOnDisk, cov.Bytes)
	}
	switch {
	case cov.FilesOnDisk == 1:
		return fmt.Sprintf("whole %d bytes", cov.Bytes)
	case cov.BytesOnDisk > 0:
		return fmt.Sprintf("partial %d of %d bytes", cov.BytesOnDisk, cov.Bytes)
	}
	return "none"
}

// controlXattr answers the virtual attributes every node has (not listed):
// XattrCached, and the warm requests (warmxattr.go). ok: attr is one of them.
func (f *FS) controlXattr(nid uint64, attr string, sizeQuery bool) (string, fuse.Status, bool) {
	if attr != XattrCached && attr != XattrRelease && !strings.HasPrefix(attr, XattrWarmPrefix) {
		return "", fuse.OK, false
	}
	if _, ok := f.nodes.get(nid); !ok && nid != fuse.FUSE_ROOT_ID {
		return "", fuse.ENOENT, true
	}
	id := catalogID(nid)
	switch {
	case attr == XattrCached:
		return f.cachedText(id), fuse.OK, true
	case strings.HasPrefix(attr, XattrWarmPrefix):
		v, st := f.warmXattr(nid, strings.TrimPrefix(attr, XattrWarmPrefix))
		return v, st, true
	case attr == XattrRelease:
		v, st := f.releaseXattr(nid)
		return v, st, true
	}
	return "", fuse.OK, false
}
