package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// runEnv is run with extra environment variables.
func runEnv(t *testing.T, timeout time.Duration, env []string, name string, args ...string) (string, string, error) {
	t.Helper()
	return runCmd(timeout, env, name, args...)
}

// mountType is the file system type of the mount at dir in
// /proc/PID/mounts ("" if dir is not mounted there).
func mountType(pid, dir string) string {
	data, err := os.ReadFile("/proc/" + pid + "/mounts")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == dir {
			return f[2]
		}
	}
	return ""
}

// helperMount is a mount made through mount.fuse3: its directories.
func helperMount(t *testing.T) *mounted {
	t.Helper()
	needFUSE(t)
	if _, err := os.Stat("/sbin/mount.fuse3"); err != nil {
		t.Skipf("needs fuse3's mount helper: %v", err)
	}
	dir := t.TempDir()
	m := &mounted{dir: filepath.Join(dir, "mnt"), logFile: filepath.Join(dir, "rsfs.log")}
	require.NoError(t, os.Mkdir(m.dir, 0o755))
	return m
}

// assertServes checks that every resource of src reads its bytes under root.
func assertServes(t *testing.T, src *sourcetest.Source, root string) {
	t.Helper()
	files := walkFiles(t, root)
	require.Len(t, files, len(src.Resources()))
	for _, r := range src.Resources() {
		want, _ := src.Body(r.URI)
		got, err := os.ReadFile(files[r.URI])
		require.NoError(t, err)
		assert.Equal(t, want, got, r.URI)
	}
}

func TestMountFuse3HelperRunsRsfsWithOptions(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 5})
	m := helperMount(t)
	m.url = src.URL()
	opts := "ro,nodev,nosuid,noatime,poll_interval=500ms,read_ahead=2,log_level=debug,log_file=" + m.logFile +
		",cache_dir=" + filepath.Join(filepath.Dir(m.dir), "cache")
	// mount.fuse3 runs `rsfs URL DIR -o OPTIONS` through /bin/sh and PATH.
	env := []string{"PATH=" + filepath.Dir(rsfsBin) + ":" + os.Getenv("PATH")}
	_, stderr, err := runEnv(t, 2*time.Minute, env, "/sbin/mount.fuse3", m.url, m.dir, "-t", "fuse.rsfs", "-o", opts)
	require.NoError(t, err, "mount.fuse3: %s", stderr)
	t.Cleanup(func() { m.unmount(t) })
	assert.Equal(t, "fuse.rsfs", mountType("self", m.dir))
	assertServes(t, src, m.dir)
	// The first DEBUG line is the snapshot a fresh mount saves in the
	// background once it serves.
	eventually(t, "log_level=debug reached the mount (a DEBUG line)", func() bool {
		log, err := os.ReadFile(m.logFile)
		return err == nil && strings.Contains(string(log), "level=DEBUG")
	})

	r := src.Resources()[0]
	require.NoError(t, src.Update(r.URI, []byte("followed at poll_interval\n")))
	eventually(t, "the change, polled every 500ms", func() bool {
		got, err := os.ReadFile(walkFiles(t, m.dir)[r.URI])
		return err == nil && string(got) == "followed at poll_interval\n"
	})
}

func TestMountFuse3HelperRefusesAnUnknownOption(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 2})
	m := helperMount(t)
	env := []string{"PATH=" + filepath.Dir(rsfsBin) + ":" + os.Getenv("PATH")}
	for _, opt := range []string{"pol_interval=5s", "cache_size", "foo"} {
		_, stderr, err := runEnv(t, time.Minute, env, "/sbin/mount.fuse3", src.URL(), m.dir, "-t", "fuse.rsfs", "-o", "ro,"+opt)
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "mount.fuse3 -o %s", opt)
		assert.Equal(t, 2, exit.ExitCode(), "a usage error, through mount.fuse3")
		assert.Contains(t, stderr, "rsfs: -o "+opt+":")
		assert.False(t, isMountPoint(m.dir))
	}
}

// TestFstabLineMountsWithMount8 mounts an fstab line with mount(8), which
// runs mount.fuse3 with a sanitized environment: no PATH, so /bin/sh finds
// rsfs in its default path. The test puts rsfs in /usr/local/bin inside a
// mount namespace of its own, and reads the mount through the namespace of
// the process serving it.
func TestFstabLineMountsWithMount8(t *testing.T) {
	for _, tool := range []string{"unshare", "nsenter", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	src := startSource(t, sourcetest.Config{Resources: 5})
	m := helperMount(t)
	m.url = src.URL()
	base := filepath.Dir(m.dir)
	fstab := filepath.Join(base, "fstab")
	line := fmt.Sprintf("%s %s fuse.rsfs ro,nodev,nosuid,_netdev,noauto,user,nofail,x-systemd.automount,x-systemd.idle-timeout=10min,comment=rsfs,poll_interval=30s,cache_size=64MiB,cache_dir=%s,log_file=%s 0 0\n",
		m.url, m.dir, filepath.Join(base, "cache"), m.logFile)
	require.NoError(t, os.WriteFile(fstab, []byte("# test fstab\n"+line), 0o644))
	bin := filepath.Dir(rsfsBin)
	script := fmt.Sprintf("mount --bind %s /usr/local/bin && exec mount --fstab %s %s", bin, fstab, m.dir)
	_, stderr, err := run(t, 2*time.Minute, "unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	require.NoError(t, err, "mount: %s", stderr)
	pid := fmt.Sprint(m.pid(t))
	t.Cleanup(func() {
		if mountType(pid, m.dir) == "" {
			return
		}
		_, stderr, err := run(t, 30*time.Second, "nsenter", "-t", pid, "-m", "umount", m.dir)
		assert.NoError(t, err, "umount: %s", stderr)
		waitFor(t, hangBound, "rsfs to exit", func() bool { return exited(atoi(t, pid)) })
	})
	assert.Equal(t, "fuse.rsfs", mountType(pid, m.dir))
	assert.False(t, isMountPoint(m.dir), "the mount is in the test's namespace only")
	assertServes(t, src, "/proc/"+pid+"/root"+m.dir)
}
