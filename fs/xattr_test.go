package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Names outside user. are ENOTSUP on every node, so GNU ls marks the device
// as without SELinux labels and ACLs and stops asking; an absent user. name
// stays ENODATA (getfattr and docs/usage.md rely on it).
func TestGetxattrErrnoByNamespace(t *testing.T) {
	tf := newTestFS(t)
	nodes := map[string]uint64{
		"file":      tf.file(t, "data", "a.txt"),
		"directory": tf.dir(t, "data"),
		"root":      fuse.FUSE_ROOT_ID,
	}
	want := map[string]syscall.Errno{
		"security.selinux":         syscall.ENOTSUP,
		"security.capability":      syscall.ENOTSUP,
		"system.posix_acl_access":  syscall.ENOTSUP,
		"system.posix_acl_default": syscall.ENOTSUP,
		"trusted.overlay.opaque":   syscall.ENOTSUP,
		"user.other":               syscall.ENODATA,
		"user.resourcesync.nope":   syscall.ENODATA,
		XattrStatus:                syscall.ENODATA, // no Config.Status
	}
	for kind, nid := range nodes {
		for name, errno := range want {
			for _, size := range []int{0, 100} {
				_, _, got := tf.getxattr(nid, name, size)
				assert.Equal(t, errno, got, "%s %s (buffer %d)", kind, name, size)
			}
		}
	}
	_, _, got := tf.getxattr(tf.dir(t, "data"), XattrURI, 0)
	assert.Equal(t, syscall.ENODATA, got, "a directory has no URI")
}

// XattrStatus is answered on the root alone (GETXATTR of node 1), and not
// listed; a size query and the read after it agree.
func TestXattrStatusOnTheRoot(t *testing.T) {
	tf := newTestFS(t)
	renders := 0
	tf.fs.cfg.Status = func() []byte {
		renders++
		return fmt.Appendf(nil, `{"renders":%d}`, renders)
	}
	_, size, errno := tf.getxattr(fuse.FUSE_ROOT_ID, XattrStatus, 0)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, uint32(len(`{"renders":1}`)), size)
	got, _, errno := tf.getxattr(fuse.FUSE_ROOT_ID, XattrStatus, int(size))
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, `{"renders":1}`, got, "the read after a size query gets what was sized")
	assert.Equal(t, 1, renders)

	_, _, errno = tf.getxattr(tf.dir(t, "data"), XattrStatus, 100)
	assert.Equal(t, syscall.ENODATA, errno, "a directory other than the root")
	_, _, errno = tf.getxattr(tf.file(t, "top.txt"), XattrStatus, 100)
	assert.Equal(t, syscall.ENODATA, errno, "a file")
	_, size, errno = tf.listxattr(fuse.FUSE_ROOT_ID, 0)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Zero(t, size, "not listed")
}

// Through the kernel: what ls sees. The POSIX ACL names must reach rsfs
// (go-fuse's IgnoreSecurityLabels would answer ENODATA for them) and come
// back as ENOTSUP, or ls keeps asking for every file.
func TestMountedGetxattrErrnoByNamespace(t *testing.T) {
	tf := newTestFS(t)
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

// XattrPoll polls once for a size query and the read after it, only for
// the mount's own user and root (anyone else: EPERM, and no poll), on the
// root alone.
func TestXattrPollOnTheRoot(t *testing.T) {
	tf := newTestFS(t)
	polls := 0
	tf.fs.cfg.Poll = func(context.Context) []byte {
		polls++
		return fmt.Appendf(nil, `{"poll":%d}`, polls)
	}
	_, size, errno := tf.getxattr(fuse.FUSE_ROOT_ID, XattrPoll, 0)
	require.Equal(t, syscall.Errno(0), errno)
	got, _, errno := tf.getxattr(fuse.FUSE_ROOT_ID, XattrPoll, int(size))
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, `{"poll":1}`, got, "the read after a size query gets that poll's answer")
	got, _, errno = tf.getxattr(fuse.FUSE_ROOT_ID, XattrPoll, 100)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, `{"poll":2}`, got, "a read of its own polls")

	h := header(fuse.FUSE_ROOT_ID)
	h.Caller.Uid = uint32(os.Getuid()) + 4242
	_, st := tf.fs.GetXAttr(nil, &h, XattrPoll, make([]byte, 100))
	assert.Equal(t, fuse.Status(syscall.EPERM), st, "another user")
	assert.Equal(t, 2, polls, "no poll for another user")

	_, _, errno = tf.getxattr(tf.dir(t, "data"), XattrPoll, 100)
	assert.Equal(t, syscall.ENODATA, errno, "a directory other than the root")
	_, size, errno = tf.listxattr(fuse.FUSE_ROOT_ID, 0)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Zero(t, size, "not listed")
}
