package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// nobody is the unprivileged user the user tests mount as.
const nobody = 65534

// userEnv is a workstation user who is not root: a home, a mount point and
// a copy of rsfs, all theirs, under a directory they can reach.
type userEnv struct {
	base, home, mnt, cache, logFile, bin string
}

// requireUserMounts skips unless an unprivileged user can mount here as on
// a stock distribution: /dev/fuse open to all (0666) and a setuid-root
// fusermount3. Running commands as that user needs root.
func requireUserMounts(t *testing.T) {
	t.Helper()
	needFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("skipping: running commands as another user needs root")
	}
	st, err := os.Stat("/dev/fuse")
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	if st.Mode().Perm()&0o006 != 0o006 {
		t.Skipf("skipping: /dev/fuse is not open to other users (mode %v; stock distributions ship 0666, and .ci/run sets it)", st.Mode().Perm())
	}
	bin, err := exec.LookPath("fusermount3")
	if err != nil {
		t.Skip("skipping: fusermount3 is not installed (Debian: apt install fuse3)")
	}
	fst, err := os.Stat(bin)
	require.NoError(t, err)
	if fst.Mode()&os.ModeSetuid == 0 || fst.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Skipf("skipping: %s is not setuid root (mode %v)", bin, fst.Mode())
	}
}

// newUserEnv builds the user's tree under /tmp (t.TempDir's parents are
// root's alone) and removes it, unmounting what is left, in t.Cleanup.
func newUserEnv(t *testing.T) *userEnv {
	t.Helper()
	requireUserMounts(t)
	base, err := os.MkdirTemp("", "rsfs-user-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	u := &userEnv{base: base, home: filepath.Join(base, "home"), mnt: filepath.Join(base, "mnt"),
		cache: filepath.Join(base, "cache"), logFile: filepath.Join(base, "home", "rsfs.log"), bin: filepath.Join(base, "rsfs")}
	for _, d := range []string{u.home, u.mnt} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	copyFile(t, rsfsBin, u.bin, 0o755)
	for _, p := range []string{base, u.home, u.mnt} {
		require.NoError(t, os.Chown(p, nobody, nobody))
	}
	t.Cleanup(func() { u.cleanup(t) })
	return u
}

// cleanup detaches what a failed test left mounted and waits for the
// servers to end.
func (u *userEnv) cleanup(t *testing.T) {
	if !isMountPoint(u.mnt) {
		return
	}
	out, _, _ := run(t, 10*time.Second, "pgrep", "-f", "rsfs mount .* "+u.mnt+" ")
	_ = syscall.Unmount(u.mnt, syscall.MNT_DETACH)
	for _, pid := range strings.Fields(out) {
		p := atoi(t, pid)
		_ = syscall.Kill(p, syscall.SIGKILL)
		waitFor(t, hangBound, "rsfs to exit", func() bool { return exited(p) })
	}
	if log, err := os.ReadFile(u.logFile); err == nil && t.Failed() {
		t.Logf("rsfs log:\n%s", log)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// run runs a command as the user, with the user's environment, and returns
// its stdout, stderr and error.
func (u *userEnv) run(t *testing.T, timeout time.Duration, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + u.home,
		"XDG_CACHE_HOME=" + filepath.Join(u.home, ".cache"), "XDG_RUNTIME_DIR=" + filepath.Join(u.home, "run")}
	cmd.Dir = u.home
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %v: timed out after %s: %w", name, args, timeout, ctx.Err())
	}
	return out.String(), errb.String(), err
}

// mount runs `rsfs mount URL DIR` as the user, in the background as a user
// would, and returns the process that serves it.
func (u *userEnv) mount(t *testing.T, url string) *mounted {
	t.Helper()
	m := &mounted{url: url, dir: u.mnt, logFile: u.logFile}
	_, stderr, err := u.run(t, 2*time.Minute, u.bin, "mount", url, u.mnt, "--cache-dir", u.cache, "--log-file", u.logFile)
	require.NoError(t, err, "rsfs mount as uid %d: %s", nobody, stderr)
	require.True(t, isMountPoint(u.mnt), "mounted")
	return m
}

// requireReads asserts that the user reads the resource's published bytes
// through the mount.
func (u *userEnv) requireReads(t *testing.T, src *sourcetest.Source, r sourcetest.Resource) {
	t.Helper()
	want, ok := src.Body(r.URI)
	require.True(t, ok)
	path := filepath.Join(u.mnt, strings.TrimPrefix(r.URI, src.URL()))
	got, stderr, err := u.run(t, time.Minute, "cat", path)
	require.NoError(t, err, "cat %s: %s", path, stderr)
	require.Equal(t, string(want), got, "bytes of %s", path)
}

// requireCleanlyGone asserts the mount point is a plain directory again:
// not in the mount table, and stat by its user works and finds it on the
// file system of its parent (no "transport endpoint is not connected").
func (u *userEnv) requireCleanlyGone(t *testing.T) {
	t.Helper()
	require.False(t, isMountPoint(u.mnt), "%s still in /proc/self/mounts", u.mnt)
	out, stderr, err := u.run(t, 10*time.Second, "stat", "-c", "%d", u.mnt, u.base)
	require.NoError(t, err, "stat %s: %s", u.mnt, stderr)
	devs := strings.Fields(out)
	require.Len(t, devs, 2)
	assert.Equal(t, devs[1], devs[0], "the mount point is on its parent's file system")
}

func TestUserMountLifecycle(t *testing.T) {
	u := newUserEnv(t)
	src := startSource(t, sourcetest.Config{Resources: 50})
	res := src.Resources()

	// Mount, read, and stop with SIGTERM (a logout, systemd --user).
	m := u.mount(t, src.URL())
	u.requireReads(t, src, res[0])
	pid := m.pid(t)
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	waitFor(t, 30*time.Second, "rsfs to exit after SIGTERM", func() bool { return exited(pid) })
	u.requireCleanlyGone(t)

	// A mount whose server was killed is dead: remounting over it works.
	m = u.mount(t, src.URL())
	pid = m.pid(t)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	waitFor(t, 30*time.Second, "rsfs to exit after SIGKILL", func() bool { return exited(pid) })
	_, stderr, err := u.run(t, 10*time.Second, "stat", u.mnt)
	require.Error(t, err, "the killed mount is dead")
	// The kernel answers ENOTCONN once the connection is gone, or
	// ECONNABORTED while it is still being torn down: both are a dead mount.
	require.Regexp(t, "Transport endpoint is not connected|Software caused connection abort", stderr)
	m = u.mount(t, src.URL())
	u.requireReads(t, src, res[1])

	// What a user types to unmount.
	pid = m.pid(t)
	_, stderr, err = u.run(t, 30*time.Second, "fusermount3", "-u", u.mnt)
	require.NoError(t, err, "fusermount3 -u: %s", stderr)
	waitFor(t, 30*time.Second, "rsfs to exit after fusermount3 -u", func() bool { return exited(pid) })
	u.requireCleanlyGone(t)

	// What root types to unmount a user's mount.
	m = u.mount(t, src.URL())
	u.requireReads(t, src, res[2])
	pid = m.pid(t)
	_, stderr, err = run(t, 30*time.Second, "umount", u.mnt)
	require.NoError(t, err, "umount: %s", stderr)
	waitFor(t, 30*time.Second, "rsfs to exit after umount", func() bool { return exited(pid) })
	u.requireCleanlyGone(t)
}

// TestUserAllowOtherIsCheckedFirst: a user's --allow-other without
// user_allow_other in /etc/fuse.conf, which fusermount3 would refuse once
// the Source is loaded, fails before anything is downloaded and names the
// fix.
func TestUserAllowOtherIsCheckedFirst(t *testing.T) {
	u := newUserEnv(t)
	conf, _ := os.ReadFile("/etc/fuse.conf")
	for _, l := range strings.Split(string(conf), "\n") {
		if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) == "user_allow_other" {
			t.Skip("skipping: /etc/fuse.conf has user_allow_other here")
		}
	}
	src := startSource(t, sourcetest.Config{Resources: 20})
	_, stderr, err := u.run(t, time.Minute, u.bin, "mount", src.URL(), u.mnt, "--allow-other", "--cache-dir", u.cache, "--log-file", u.logFile)
	t.Logf("stderr: %s", stderr)
	require.Error(t, err)
	assert.Contains(t, stderr, "rsfs: --allow-other: fusermount3 lets a user who is not root use allow_other only with a line user_allow_other in /etc/fuse.conf")
	assert.Zero(t, src.Counters().Docs(), "documents fetched before the check")
	assert.False(t, isMountPoint(u.mnt))
}
