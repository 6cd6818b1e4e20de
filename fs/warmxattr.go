package fs

import (
	"context"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// `rsfs warm PATH` asks the mount, through a getxattr of PATH, to fill the
// disk cache with every file under PATH and to pin them there (package
// prefetch's warm jobs):
//
//   - user.rsfs.warm.ID starts job ID (a fresh random name the command
//     picks) for PATH's subtree, or, once started, answers its progress as
//     JSON (prefetch.Job).
//   - user.rsfs.release unpins the files under PATH and answers how many
//     as JSON (prefetch.Released).
//
// Neither is listed. Whoever can see a file can ask (as whoever can read
// it can fetch it). The mount is read-only, so a setxattr would be refused
// before it reached rsfs: a getxattr it is.
const (
	XattrWarmPrefix = "user.rsfs.warm."
	XattrRelease    = "user.rsfs.release"
)

// warmXattr answers user.rsfs.warm.ID on node nid.
func (f *FS) warmXattr(nid uint64, id string) (string, fuse.Status) {
	if id == "" || strings.ContainsAny(id, "/\x00") {
		return "", fuse.EINVAL
	}
	return string(f.pre.AskJob(id, catalogID(nid))), fuse.OK
}

// releaseXattr answers user.rsfs.release on node nid: the files under it
// are no longer pinned.
func (f *FS) releaseXattr(nid uint64) (string, fuse.Status) {
	return string(f.pre.Release(catalogID(nid))), fuse.OK
}

// LearnLengths learns, in the background, the lengths of the files their
// lists gave none (prefetch.LearnLengths), and returns how many it learned
// and how many failed.
func (f *FS) LearnLengths(ctx context.Context, parallel int) (learned, failed int64) {
	return f.pre.LearnLengths(ctx, parallel)
}
