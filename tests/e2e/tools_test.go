package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

func TestGrepFindsPlantedString(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 400})
	const needle = "NEEDLE-4f1c2e"
	res := src.Resources()
	planted := []string{res[5].URI, res[123].URI, res[399].URI}
	for _, uri := range planted {
		require.NoError(t, src.Plant(uri, []byte("before\nsome "+needle+" text\nafter\n")))
	}
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	var want []string
	for _, uri := range planted {
		want = append(want, files[uri])
	}
	sort.Strings(want)
	out, stderr, err := run(t, time.Minute, "grep", "-rl", needle, m.dir)
	require.NoError(t, err, stderr)
	got := strings.Fields(out)
	sort.Strings(got)
	assert.Equal(t, want, got)
}

func TestRsyncCopyAndNoRefetch(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 600, Awkward: true})
	m := mount(t, src.URL(), allowOtherHost(src)...)
	copyDir := filepath.Join(t.TempDir(), "copy")
	_, stderr, err := run(t, 2*time.Minute, "rsync", "-a", m.dir+"/", copyDir+"/")
	require.NoError(t, err, stderr)
	_, stderr, err = run(t, time.Minute, "diff", "-r", m.dir, copyDir)
	require.NoError(t, err, "diff -r: %s", stderr)

	src.ResetCounters()
	out, stderr, err := run(t, 2*time.Minute, "rsync", "-a", "--stats", m.dir+"/", copyDir+"/")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Number of regular files transferred: 0")
	c := src.Counters()
	assert.Zero(t, c.ContentGets(), "resource GETs during the second rsync")
}

func TestTarListsEveryFile(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 300, Awkward: true})
	m := mount(t, src.URL(), allowOtherHost(src)...)
	out, stderr, err := run(t, 2*time.Minute, "sh", "-c", "cd "+m.dir+" && tar cf - . | tar tf - | grep -v '/$' | wc -l")
	require.NoError(t, err, stderr)
	assert.Equal(t, len(src.Resources()), atoi(t, strings.TrimSpace(out)))
}

// TestMutationsFailReadOnly checks what a user sees through a real mount.
// The mount is MS_RDONLY, so the kernel answers most of these before rsfs
// is asked: rsfs's own EROFS answers are tested in package fs
// (TestMutationsAnswerEROFS, TestMountedMutationsReachRsfs).
func TestMutationsFailReadOnly(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 10})
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	var some string
	for _, p := range files {
		some = p
		break
	}
	dir := filepath.Dir(some)
	checks := map[string]error{
		"write":   os.WriteFile(some, []byte("x"), 0o644),
		"create":  os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644),
		"rename":  os.Rename(some, some+".moved"),
		"remove":  os.Remove(some),
		"mkdir":   os.Mkdir(filepath.Join(dir, "newdir"), 0o755),
		"rmdir":   os.Remove(dir),
		"chmod":   os.Chmod(some, 0o644),
		"symlink": os.Symlink("x", filepath.Join(dir, "link")),
		"xattr":   syscall.Setxattr(some, "user.x", []byte("1"), 0),
		"trunc":   os.Truncate(some, 0),
	}
	for name, err := range checks {
		assert.ErrorIs(t, err, syscall.EROFS, name)
	}
}

func TestIntegrityFailureIsEIO(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 40, Hashes: []string{"sha-256"}})
	res := src.Resources()
	bad := res[7]
	good := res[8]
	body, _ := src.Body(bad.URI)
	wrong := append([]byte{}, body...)
	wrong[len(wrong)/2] ^= 0xff
	src.Corrupt(bad.URI, wrong)
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	_, err := os.ReadFile(files[bad.URI])
	assert.ErrorIs(t, err, syscall.EIO, "a hash mismatch fails the read")
	got, err := os.ReadFile(files[good.URI])
	require.NoError(t, err)
	want, _ := src.Body(good.URI)
	assert.Equal(t, want, got, "other files unaffected")
	log, _ := os.ReadFile(m.logFile)
	assert.Contains(t, string(log), bad.URI, "the failure is logged with the URI")
}

func TestMirrorServesWhenPrimaryFails(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 20, Mirror: true})
	r := src.Resources()[4]
	src.FailPrimary(r.URI, 500)
	m := mount(t, src.URL(), "--retries", "1")
	files := walkFiles(t, m.dir)
	got, err := os.ReadFile(files[r.URI])
	require.NoError(t, err)
	want, _ := src.Body(r.URI)
	assert.Equal(t, want, got)
	assert.Positive(t, src.Counters().Mirror)
}

func TestUnmountWithReadInFlight(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 5})
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	pid := m.pid(t)
	src.SetDelay(time.Hour)
	src.ResetCounters()
	done := make(chan error, 1)
	go func() {
		_, err := os.ReadFile(files[src.Resources()[0].URI])
		done <- err
	}()
	waitFor(t, 30*time.Second, "the read to reach the Source", func() bool { return src.Counters().ContentGets() > 0 })
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	waitFor(t, hangBound, "the mount to go", func() bool { return !isMountPoint(m.dir) })
	select {
	case err := <-done:
		assert.ErrorIs(t, err, syscall.EIO, "the read in flight fails")
	case <-time.After(20 * time.Second):
		t.Fatal("read still hanging 20 s after SIGTERM")
	}
	waitFor(t, hangBound, "rsfs to exit", func() bool { return exited(pid) })
}

func TestMountErrors(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", "http://127.0.0.1:1/", dir, "--retries", "0")
	assert.Error(t, err)
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
	assert.Contains(t, stderr, "127.0.0.1:1")

	src := startSource(t, sourcetest.Config{Resources: 3})
	_, stderr, err = run(t, time.Minute, rsfsBin, "mount", src.URL(), filepath.Join(dir, "missing"))
	assert.Error(t, err)
	assert.Contains(t, stderr, "no such file or directory")

	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), nil, 0o644))
	_, stderr, err = run(t, time.Minute, rsfsBin, "mount", src.URL(), full)
	assert.Error(t, err)
	assert.Contains(t, stderr, "not empty")

	_, stderr, err = run(t, time.Minute, rsfsBin, "mount", src.URL(), dir, "--cache-size", "12Q")
	assert.Error(t, err)
	assert.Equal(t, "rsfs: --cache-size: \"12Q\" is not a size (e.g. 256MiB)\n", stderr)

	_, stderr, err = run(t, time.Minute, rsfsBin, "mount", src.URL()+"nothing-here", dir)
	assert.Error(t, err)
	assert.False(t, isMountPoint(dir))
	_ = stderr
}

func TestStaleMountIsCleanedUp(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 10})
	m := mount(t, src.URL())
	require.NoError(t, syscall.Kill(m.pid(t), syscall.SIGKILL))
	waitFor(t, hangBound, "the mount to go stale", func() bool {
		var st syscall.Statfs_t
		return errors.Is(syscall.Statfs(m.dir, &st), syscall.ENOTCONN)
	})
	m2 := &mounted{dir: m.dir, logFile: m.logFile}
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", src.URL(), m.dir, "--log-file", m.logFile, "--cache-dir", "none")
	require.NoError(t, err, stderr)
	files := walkFiles(t, m2.dir)
	assert.Len(t, files, src.Len())
}

func TestForegroundAndSignal(t *testing.T) {
	needFUSE(t)
	src := startSource(t, sourcetest.Config{Resources: 10})
	dir := t.TempDir()
	cmd := execCommand(rsfsBin, "mount", "--foreground", src.URL(), dir)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
	})
	waitFor(t, time.Minute, "the foreground mount", func() bool { return isMountPoint(dir) })
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		assert.NoError(t, err, "clean exit after SIGTERM")
	case <-time.After(20 * time.Second):
		t.Fatal("no exit 20 s after SIGTERM")
	}
	assert.False(t, isMountPoint(dir))
}

func TestBadBytesAreFetchedAgainFromTheMirror(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 20, Mirror: true, Hashes: []string{"sha-256"}})
	r := src.Resources()[5]
	body, _ := src.Body(r.URI)
	wrong := append([]byte{}, body...)
	wrong[0] ^= 0xff
	src.Corrupt(r.URI, wrong) // the mirror keeps the true bytes
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	got, err := os.ReadFile(files[r.URI])
	require.NoError(t, err)
	assert.Equal(t, body, got, "the mirror's verified copy, not the primary's bad bytes")
	assert.Positive(t, src.Counters().Mirror)
	log, _ := os.ReadFile(m.logFile)
	assert.Contains(t, string(log), "trying the next copy")
}

func TestFusermountUnmounts(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 5})
	m := mount(t, src.URL())
	pid := m.pid(t)
	_, stderr, err := run(t, 30*time.Second, "fusermount3", "-u", m.dir)
	require.NoError(t, err, stderr)
	assert.False(t, isMountPoint(m.dir))
	waitFor(t, hangBound, "rsfs to exit", func() bool { return exited(pid) })
}
