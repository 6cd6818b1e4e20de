package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// readOnly answers every mutating call with EROFS. The mount is MS_RDONLY,
// so the kernel refuses most of them first; these answer the rest.
type readOnly struct{}

func (readOnly) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Removexattr(ctx context.Context, attr string) syscall.Errno { return syscall.EROFS }

func (readOnly) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Mknod(ctx context.Context, name string, mode, dev uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}

func (readOnly) Unlink(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }

func (readOnly) Rmdir(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }

func (readOnly) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Write(ctx context.Context, f gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	return 0, syscall.EROFS
}

func (readOnly) Allocate(ctx context.Context, f gofs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	return syscall.EROFS
}

var (
	_ gofs.NodeSetattrer     = readOnly{}
	_ gofs.NodeSetxattrer    = readOnly{}
	_ gofs.NodeRemovexattrer = readOnly{}
	_ gofs.NodeMkdirer       = readOnly{}
	_ gofs.NodeMknoder       = readOnly{}
	_ gofs.NodeLinker        = readOnly{}
	_ gofs.NodeSymlinker     = readOnly{}
	_ gofs.NodeCreater       = readOnly{}
	_ gofs.NodeUnlinker      = readOnly{}
	_ gofs.NodeRmdirer       = readOnly{}
	_ gofs.NodeRenamer       = readOnly{}
	_ gofs.NodeWriter        = readOnly{}
	_ gofs.NodeAllocater     = readOnly{}
)
