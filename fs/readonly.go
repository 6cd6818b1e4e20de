package fs

import (
	"github.com/hanwen/go-fuse/v2/fuse"
)

// base answers what FS does not: go-fuse's defaults (ENOSYS, which the
// kernel takes as "not supported": it stops asking for access checks,
// fsync, locks and the like).
type base struct{ fuse.RawFileSystem }

// The mount is MS_RDONLY, so the kernel refuses most mutating calls first;
// these answer the rest with EROFS.

func (f *FS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	return fuse.EROFS
}

func (f *FS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	return 0, fuse.EROFS
}

func (f *FS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	return 0, fuse.EROFS
}

func (f *FS) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	return 0, fuse.EROFS
}

func (f *FS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	return fuse.EROFS
}

func (f *FS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	return fuse.EROFS
}

func (f *FS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	return fuse.EROFS
}

var _ fuse.RawFileSystem = (*FS)(nil)
