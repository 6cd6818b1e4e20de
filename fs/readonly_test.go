package fs

import (
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
)

// mutation calls one mutating FUSE method on node nid; other is a second
// node (a link's target, a rename's new directory).
type mutation struct {
	name string
	call func(f *FS, nid, other uint64) fuse.Status
}

// mutations are every call that would change the tree, a file or its
// attributes. FS embeds go-fuse's defaults, which answer ENOSYS (and a
// kernel that gets ENOSYS for SETATTR, say, reports it, not EROFS), so
// each must be answered by rsfs itself.
var mutations = []mutation{
	{"setattr", func(f *FS, nid, _ uint64) fuse.Status {
		in := &fuse.SetAttrIn{}
		in.InHeader = header(nid)
		in.Valid, in.Size = fuse.FATTR_SIZE, 0
		return f.SetAttr(nil, in, &fuse.AttrOut{})
	}},
	{"setxattr", func(f *FS, nid, _ uint64) fuse.Status {
		in := &fuse.SetXAttrIn{InHeader: header(nid)}
		in.Size = 1
		return f.SetXAttr(nil, in, "user.x", []byte("1"))
	}},
	{"removexattr", func(f *FS, nid, _ uint64) fuse.Status {
		h := header(nid)
		return f.RemoveXAttr(nil, &h, "user.resourcesync.uri")
	}},
	{"mkdir", func(f *FS, nid, _ uint64) fuse.Status {
		return f.Mkdir(nil, &fuse.MkdirIn{InHeader: header(nid), Mode: 0o755}, "newdir", &fuse.EntryOut{})
	}},
	{"mknod", func(f *FS, nid, _ uint64) fuse.Status {
		return f.Mknod(nil, &fuse.MknodIn{InHeader: header(nid), Mode: syscall.S_IFIFO | 0o644}, "fifo", &fuse.EntryOut{})
	}},
	{"link", func(f *FS, nid, other uint64) fuse.Status {
		return f.Link(nil, &fuse.LinkIn{InHeader: header(nid), Oldnodeid: other}, "hardlink", &fuse.EntryOut{})
	}},
	{"symlink", func(f *FS, nid, _ uint64) fuse.Status {
		h := header(nid)
		return f.Symlink(nil, &h, "target", "link", &fuse.EntryOut{})
	}},
	{"create", func(f *FS, nid, _ uint64) fuse.Status {
		in := &fuse.CreateIn{InHeader: header(nid), Flags: syscall.O_WRONLY | syscall.O_CREAT, Mode: 0o644}
		return f.Create(nil, in, "new.txt", &fuse.CreateOut{})
	}},
	{"tmpfile", func(f *FS, nid, _ uint64) fuse.Status {
		in := &fuse.CreateIn{InHeader: header(nid), Flags: syscall.O_RDWR, Mode: 0o644}
		return f.Tmpfile(nil, in, &fuse.CreateOut{})
	}},
	{"unlink", func(f *FS, nid, _ uint64) fuse.Status {
		h := header(nid)
		return f.Unlink(nil, &h, "a.txt")
	}},
	{"rmdir", func(f *FS, nid, _ uint64) fuse.Status {
		h := header(nid)
		return f.Rmdir(nil, &h, "sub")
	}},
	{"rename", func(f *FS, nid, other uint64) fuse.Status {
		return f.Rename(nil, &fuse.RenameIn{InHeader: header(nid), Newdir: other}, "a.txt", "moved.txt")
	}},
	{"write", func(f *FS, nid, _ uint64) fuse.Status {
		written, st := f.Write(nil, &fuse.WriteIn{InHeader: header(nid), Size: 1}, []byte("x"))
		if written != 0 {
			return fuse.OK
		}
		return st
	}},
	{"writev", func(f *FS, nid, _ uint64) fuse.Status {
		written, st := f.Writev(nil, &fuse.WriteIn{InHeader: header(nid), Size: 2}, [][]byte{[]byte("x"), []byte("y")})
		if written != 0 {
			return fuse.OK
		}
		return st
	}},
	{"copy_file_range", func(f *FS, nid, other uint64) fuse.Status {
		written, st := f.CopyFileRange(nil, &fuse.CopyFileRangeIn{InHeader: header(other), NodeIdOut: nid, Len: 4})
		if written != 0 {
			return fuse.OK
		}
		return st
	}},
	{"allocate", func(f *FS, nid, _ uint64) fuse.Status {
		return f.Fallocate(nil, &fuse.FallocateIn{InHeader: header(nid), Length: 4096})
	}},
}

// TestMutationsAnswerEROFS asks rsfs itself, not the kernel: a mount is
// MS_RDONLY, so through the kernel most of these never reach rsfs and an
// end-to-end test cannot tell rsfs's answers from the kernel's
// (TestMountedMutationsReachRsfs mounts without MS_RDONLY for that).
func TestMutationsAnswerEROFS(t *testing.T) {
	tf := newTestFS(t)
	nodes := map[string]uint64{
		"root":  fuse.FUSE_ROOT_ID,
		"dir":   tf.dir(t, "data"),
		"file":  tf.file(t, "data", "a.txt"),
		"empty": tf.file(t, "data", "sub", "c.txt"),
	}
	for kind, nid := range nodes {
		for _, m := range mutations {
			assert.Equal(t, fuse.EROFS, m.call(tf.fs, nid, fuse.FUSE_ROOT_ID), "%s: %s", kind, m.name)
		}
	}
	assert.Len(t, tf.list(t, tf.dir(t, "data")), 3, "the tree is unchanged")
	for uri, n := range tf.origin.Requests() {
		assert.Zero(t, n, "%s fetched", uri)
	}
}
