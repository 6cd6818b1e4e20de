package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// Two mounts of one Source with one --cache-dir would share its snapshot
// and disk cache: the second is refused, naming the first.
func TestSecondMountOfOneStateDirIsRefused(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 20})
	base := t.TempDir()
	dirA, dirB, cacheDir := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dirA, 0o755))
	require.NoError(t, os.Mkdir(dirB, 0o755))
	first := mountAt(t, src.URL(), dirA, cacheDir)

	refused := &mounted{url: src.URL(), dir: dirB, logFile: filepath.Join(base, "b.log")}
	t.Cleanup(func() { refused.unmount(t) }) // if it was not refused
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", src.URL(), dirB, "--cache-dir", cacheDir, "--log-file", refused.logFile)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the second mount fails")
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr, fmt.Sprintf("is in use by another rsfs mount (pid %d, on %s)", first.pid(t), dirA))
	assert.False(t, isMountPoint(dirB))

	other := mountAt(t, src.URL(), dirB, filepath.Join(base, "other-cache"))
	assert.True(t, isMountPoint(other.dir), "another --cache-dir mounts")
	other.unmount(t)
	first.unmount(t)
	second := mountAt(t, src.URL(), dirB, cacheDir)
	assert.True(t, isMountPoint(second.dir), "free once the first is unmounted")
}

// "umount DIR && rsfs mount URL DIR" works while the first process is
// still closing after its unmount (here: unsubscribing from a hub that takes
// 3 s to answer), with the same --cache-dir: the second mount waits for the
// first to let go of the state directory instead of being refused.
func TestRemountRightAfterUnmountWaitsForTheClosingMount(t *testing.T) {
	src, first, cacheDir := mountSubscribed(t, startHubBehind(t, slowToUnsubscribe(3*time.Second)))
	dir := first.dir
	pid := first.pid(t)

	_, stderr, err := run(t, 30*time.Second, "umount", dir)
	require.NoError(t, err, "umount: %s", stderr)
	require.False(t, exited(pid), "the first mount is still closing when the second starts")

	second := mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "1h")
	assert.True(t, exited(pid), "the state directory was taken only after the first mount exited")
	assert.True(t, isMountPoint(dir))
	uri := src.Resources()[0].URI
	resp, err := http.Get(uri)
	require.NoError(t, err)
	want, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	got, err := os.ReadFile(walkFiles(t, second.dir)[uri])
	require.NoError(t, err)
	assert.Equal(t, want, got, "the second mount serves the Source's bytes")
}

// A file held open keeps the mount busy after SIGTERM: the mount is
// detached, and after its grace the process still saves its snapshot and
// unsubscribes from the hub before it exits.
func TestSIGTERMWithAnOpenFileSavesAndUnsubscribes(t *testing.T) {
	hub := startHub(t)
	src, m, cacheDir := mountSubscribed(t, hub)
	dir := m.dir
	var snap string
	waitFor(t, hangBound, "the first snapshot", func() bool {
		found, _ := filepath.Glob(filepath.Join(cacheDir, "*", "catalog.snap"))
		if len(found) == 1 {
			snap = found[0]
		}
		return snap != ""
	})
	before, err := os.Stat(snap)
	require.NoError(t, err)

	files := walkFiles(t, m.dir)
	held, err := os.Open(files[src.Resources()[0].URI])
	require.NoError(t, err)
	defer held.Close()

	pid := m.pid(t)
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	waitFor(t, 60*time.Second, "rsfs to exit", func() bool { return exited(pid) })
	assert.False(t, isMountPoint(dir), "detached")
	// The hub removes the subscription once its verification GET, which
	// rsfs answered before it exited, has returned: on a loaded machine
	// that can be after rsfs has gone. A verification rsfs did not answer
	// (it exited first, or never unsubscribed) leaves it there.
	waitFor(t, hangBound, "the hub to remove the subscription rsfs unsubscribed before exiting", func() bool { return hub.subscribers() == 0 })
	after, err := os.Stat(snap)
	require.NoError(t, err)
	assert.True(t, after.ModTime().After(before.ModTime()), "snapshot saved on the way out: %s, then %s", before.ModTime(), after.ModTime())
}

// mountSubscribed starts a Source that advertises hub, mounts it at
// BASE/mnt with --cache-dir BASE/cache, polling hourly, and returns once the
// mount has subscribed.
func mountSubscribed(t *testing.T, hub *testHub) (src *sourcetest.Source, m *mounted, cacheDir string) {
	t.Helper()
	src = startSource(t, sourcetest.Config{Resources: 20, Hub: hub.srv.URL + "/"})
	base := t.TempDir()
	dir := filepath.Join(base, "mnt")
	cacheDir = filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m = mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "1h", "--notify-addr", "127.0.0.1:0")
	waitFor(t, hangBound, "the subscription", func() bool { return hub.subscribers() == 1 })
	return src, m, cacheDir
}

// slowToUnsubscribe delays a hub's answer to an unsubscription by d.
func slowToUnsubscribe(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if form, _ := url.ParseQuery(string(body)); form.Get("hub.mode") == "unsubscribe" {
				time.Sleep(d)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}
