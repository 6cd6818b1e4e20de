package fs

import (
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
)

// mutation calls one mutating method on a node, if the node has it.
type mutation struct {
	name string
	call func(t *testing.T, n, other gofs.InodeEmbedder) (syscall.Errno, bool)
}

// mutations are every call that would change the tree, a file or its
// attributes. A node without the method leaves the answer to go-fuse's
// defaults (Setattr, for one, would then succeed), so each must be rsfs's.
var mutations = []mutation{
	{"setattr", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeSetattrer)
		if !ok {
			return 0, false
		}
		in := &fuse.SetAttrIn{}
		in.Valid, in.Size = fuse.FATTR_SIZE, 0
		return m.Setattr(testCtx(t), nil, in, &fuse.AttrOut{}), true
	}},
	{"setxattr", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeSetxattrer)
		if !ok {
			return 0, false
		}
		return m.Setxattr(testCtx(t), "user.x", []byte("1"), 0), true
	}},
	{"removexattr", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeRemovexattrer)
		if !ok {
			return 0, false
		}
		return m.Removexattr(testCtx(t), "user.resourcesync.uri"), true
	}},
	{"mkdir", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeMkdirer)
		if !ok {
			return 0, false
		}
		_, errno := m.Mkdir(testCtx(t), "newdir", 0o755, &fuse.EntryOut{})
		return errno, true
	}},
	{"mknod", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeMknoder)
		if !ok {
			return 0, false
		}
		_, errno := m.Mknod(testCtx(t), "fifo", syscall.S_IFIFO|0o644, 0, &fuse.EntryOut{})
		return errno, true
	}},
	{"link", func(t *testing.T, n, other gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeLinker)
		if !ok {
			return 0, false
		}
		_, errno := m.Link(testCtx(t), other, "hardlink", &fuse.EntryOut{})
		return errno, true
	}},
	{"symlink", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeSymlinker)
		if !ok {
			return 0, false
		}
		_, errno := m.Symlink(testCtx(t), "target", "link", &fuse.EntryOut{})
		return errno, true
	}},
	{"create", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeCreater)
		if !ok {
			return 0, false
		}
		_, _, _, errno := m.Create(testCtx(t), "new.txt", syscall.O_WRONLY|syscall.O_CREAT, 0o644, &fuse.EntryOut{})
		return errno, true
	}},
	{"unlink", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeUnlinker)
		if !ok {
			return 0, false
		}
		return m.Unlink(testCtx(t), "a.txt"), true
	}},
	{"rmdir", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeRmdirer)
		if !ok {
			return 0, false
		}
		return m.Rmdir(testCtx(t), "sub"), true
	}},
	{"rename", func(t *testing.T, n, other gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeRenamer)
		if !ok {
			return 0, false
		}
		return m.Rename(testCtx(t), "a.txt", other, "moved.txt", 0), true
	}},
	{"write", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeWriter)
		if !ok {
			return 0, false
		}
		written, errno := m.Write(testCtx(t), nil, []byte("x"), 0)
		assert.Zero(t, written)
		return errno, true
	}},
	{"allocate", func(t *testing.T, n, _ gofs.InodeEmbedder) (syscall.Errno, bool) {
		m, ok := n.(gofs.NodeAllocater)
		if !ok {
			return 0, false
		}
		return m.Allocate(testCtx(t), nil, 0, 4096, 0), true
	}},
}

// TestMutationsAnswerEROFS asks rsfs itself, not the kernel: a mount is
// MS_RDONLY, so through the kernel most of these never reach rsfs and an
// end-to-end test cannot tell rsfs's answers from the kernel's.
func TestMutationsAnswerEROFS(t *testing.T) {
	tf := newTestFS(t)
	nodes := map[string]gofs.InodeEmbedder{
		"root":  tf.root,
		"dir":   tf.dir(t, "data"),
		"file":  tf.file(t, "data", "a.txt"),
		"empty": tf.file(t, "data", "sub", "c.txt"),
	}
	for kind, n := range nodes {
		for _, m := range mutations {
			errno, ok := m.call(t, n, tf.root)
			if assert.True(t, ok, "%s: %s has no answer of rsfs's own", kind, m.name) {
				assert.Equal(t, syscall.EROFS, errno, "%s: %s", kind, m.name)
			}
		}
	}
	assert.Len(t, readdir(t, tf.dir(t, "data")), 3, "the tree is unchanged")
	for uri, n := range tf.origin.requests {
		assert.Zero(t, n, "%s fetched", uri)
	}
}
