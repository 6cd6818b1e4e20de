package fs

import (
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/stretchr/testify/assert"
)

// Names outside user. are ENOTSUP on every node, so GNU ls marks the device
// as without SELinux labels and ACLs and stops asking; an absent user. name
// stays ENODATA (getfattr and the README rely on it).
func TestGetxattrErrnoByNamespace(t *testing.T) {
	tf := newTestFS(t)
	nodes := map[string]gofs.NodeGetxattrer{
		"file":      tf.file(t, "data", "a.txt"),
		"directory": tf.dir(t, "data"),
		"root":      tf.root,
	}
	want := map[string]syscall.Errno{
		"security.selinux":         syscall.ENOTSUP,
		"security.capability":      syscall.ENOTSUP,
		"system.posix_acl_access":  syscall.ENOTSUP,
		"system.posix_acl_default": syscall.ENOTSUP,
		"trusted.overlay.opaque":   syscall.ENOTSUP,
		"user.other":               syscall.ENODATA,
		"user.resourcesync.nope":   syscall.ENODATA,
	}
	for kind, n := range nodes {
		for name, errno := range want {
			for _, dest := range [][]byte{nil, make([]byte, 100)} {
				_, got := n.Getxattr(testCtx(t), name, dest)
				assert.Equal(t, errno, got, "%s %s (buffer %d)", kind, name, len(dest))
			}
		}
	}
	_, got := tf.dir(t, "data").Getxattr(testCtx(t), XattrURI, nil)
	assert.Equal(t, syscall.ENODATA, got, "a directory has no URI")
}
