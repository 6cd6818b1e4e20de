package fs

import (
	"path/filepath"
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Names outside user. are ENOTSUP on every node, so GNU ls marks the device
// as without SELinux labels and ACLs and stops asking; an absent user. name
// stays ENODATA (getfattr and docs/usage.md rely on it).
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

// Through the kernel: what ls sees. The POSIX ACL names must reach rsfs
// (go-fuse's IgnoreSecurityLabels would answer ENODATA for them) and come
// back as ENOTSUP, or ls keeps asking for every file.
func TestMountedGetxattrErrnoByNamespace(t *testing.T) {
	tf := newUnmountedFS(t)
	dir := mountTestFS(t, tf, true)
	want := map[string]syscall.Errno{
		"security.selinux":         syscall.ENOTSUP,
		"system.posix_acl_access":  syscall.ENOTSUP,
		"system.posix_acl_default": syscall.ENOTSUP,
		"user.other":               syscall.ENODATA,
	}
	for _, p := range []string{filepath.Join(dir, "data", "a.txt"), filepath.Join(dir, "data"), dir} {
		for name, errno := range want {
			_, err := syscall.Getxattr(p, name, make([]byte, 256))
			assert.ErrorIs(t, err, errno, "%s %s", p, name)
			_, err = syscall.Getxattr(p, name, nil)
			assert.ErrorIs(t, err, errno, "%s %s (size query)", p, name)
		}
	}
	buf := make([]byte, 256)
	n, err := syscall.Getxattr(filepath.Join(dir, "data", "a.txt"), XattrURI, buf)
	require.NoError(t, err)
	assert.Equal(t, aURI, string(buf[:n]))
}
