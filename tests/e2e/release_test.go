package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// Tests of issue 25, "ready to package and ship": signals, hold and
// release acknowledged, flags range-checked, messages, logs.

// slowSource is a Source whose first answer takes delay: long enough to
// interrupt a mount while it loads, short enough that a mount that was not
// stopped would be made while the test still watches. asked reports
// whether the mount has asked it anything yet.
func slowSource(t *testing.T, delay time.Duration) (string, func() bool) {
	t.Helper()
	src := startSource(t, sourcetest.Config{Resources: 20})
	target, err := url.Parse(src.URL())
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var first, asked atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(true)
		if first.CompareAndSwap(false, true) {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", asked.Load
}

// startMount starts `rsfs mount URL DIR` without waiting for it, and
// kills what is left of it when the test ends.
func startMount(t *testing.T, url, dir string, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	base := filepath.Dir(dir)
	args := append([]string{"mount", url, dir, "--log-file", filepath.Join(base, "rsfs.log"), "--cache-dir", filepath.Join(base, "cache")}, extra...)
	cmd := exec.Command(rsfsBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for _, pid := range mountPIDs(t, url, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if isMountPoint(dir) {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return cmd, &stderr
}

// mountPIDs are the rsfs processes mounting url on dir.
func mountPIDs(t *testing.T, url, dir string) []int {
	out, _, _ := run(t, 10*time.Second, "pgrep", "-f", "rsfs mount "+url+" "+dir+" ")
	var pids []int
	for _, f := range strings.Fields(out) {
		pids = append(pids, atoi(t, f))
	}
	return pids
}

// waitCmd waits for cmd to exit, at most d, and returns its exit status.
func waitCmd(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		return exit.ExitCode()
	case <-time.After(d):
		t.Fatalf("%v did not exit within %s", cmd.Args, d)
		return -1
	}
}

// mountDir makes BASE/mnt.
func mountDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	return dir
}

// neverMounted checks that nothing mounted dir, with no wait on the
// clock: once every rsfs process that would mount url on dir has exited
// (a bound on hanging, hangBound), nothing can mount it any more; then dir
// must not be a mount point, and the log must never have said "mounted"
// (a mount made and undone before the exit).
func neverMounted(t *testing.T, url, dir string) {
	t.Helper()
	waitFor(t, hangBound, "every rsfs process mounting "+dir+" to exit", func() bool {
		return len(mountPIDs(t, url, dir)) == 0
	})
	assert.False(t, isMountPoint(dir), "mounted after all")
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(dir), "rsfs.log"))
	assert.NotContains(t, string(log), "msg=mounted ", "the log says it mounted")
}

// ^C at the terminal reaches only the waiting parent of a background
// mount; the loading stops, the parent says so, and nothing is mounted.
func TestInterruptWhileLoadingMountsNothing(t *testing.T) {
	needFUSE(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel() // each waits on its own Source's delay
			url, asked := slowSource(t, 4*time.Second)
			dir := mountDir(t)
			cmd, stderr := startMount(t, url, dir)
			waitFor(t, hangBound, "loading: discovery waiting on the Source", asked)
			require.NoError(t, cmd.Process.Signal(sig))
			code := waitCmd(t, cmd, 20*time.Second)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr.String(), "interrupted ("+sig.String()+"): loading stopped, nothing mounted")
			neverMounted(t, url, dir)
		})
	}
}

// A waiting parent killed outright passes nothing on: the child sees its
// parent gone and stops loading.
func TestParentKilledWhileLoadingMountsNothing(t *testing.T) {
	needFUSE(t)
	url, asked := slowSource(t, 4*time.Second)
	dir := mountDir(t)
	cmd, _ := startMount(t, url, dir)
	waitFor(t, hangBound, "loading: discovery waiting on the Source", asked)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	neverMounted(t, url, dir)
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(dir), "rsfs.log"))
	assert.Contains(t, string(log), "terminated signal received", "the child logs why it stopped")
}

// SIGHUP to a background mount reopens its log file (logrotate moved it)
// and the mount goes on serving. Nothing is proved by waiting: a second
// SIGHUP handled shows the first left the signal loop waiting (a SIGHUP
// taken for a stop leaves it), a read shows the mount serving, and once
// the test has unmounted it and the process has exited, its whole log says
// it stopped for the unmount, not for a signal.
func TestSIGHUPReopensTheLogOfABackgroundMount(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 20})
	m := mount(t, src.URL(), "--poll-interval", "0")
	pid := m.pid(t)
	require.NoError(t, os.Rename(m.logFile, m.logFile+".1"))
	reopened := func(n int) func() bool {
		return func() bool {
			data, err := os.ReadFile(m.logFile)
			return err == nil && bytes.Count(data, []byte("log file reopened")) == n
		}
	}
	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
	waitFor(t, hangBound, "a new log file", reopened(1))
	res := src.Resources()[0]
	data, err := os.ReadFile(m.path(strings.TrimPrefix(res.URI, src.URL())))
	require.NoError(t, err, "still serving after SIGHUP")
	want, _ := src.Body(res.URI)
	assert.Equal(t, want, data)
	_, stderr, err := run(t, 10*time.Second, rsfsBin, "status", m.dir)
	assert.NoError(t, err, "status: %s", stderr)
	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP), "the mount is still running")
	waitFor(t, hangBound, "the second SIGHUP handled as the first", reopened(2))
	assert.True(t, isMountPoint(m.dir), "still mounted")

	m.unmount(t) // and waits for the process to exit
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(log), "msg=unmounted", "the mount stopped for the unmount")
	assert.NotContains(t, string(log), "signal received", "no SIGHUP stopped it")
	old, err := os.ReadFile(m.logFile + ".1")
	require.NoError(t, err)
	assert.Contains(t, string(old), `msg=mounted`, "the rotated file has the lines before")
}

// rsfsEnv runs rsfs with env added to the environment, and returns its
// stdout, stderr and exit status.
func rsfsEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	stdout, stderr, err := runEnv(t, 30*time.Second, env, rsfsBin, args...)
	if err == nil {
		return stdout, stderr, 0
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "rsfs %v: %s", args, stderr)
	return stdout, stderr, exit.ExitCode()
}

// hold and release succeed only once the mount's status shows them: through
// a symlink, and from another $XDG_RUNTIME_DIR (sudo, another session), the
// hold reaches the mount; on a directory that is no mount, they fail.
func TestHoldAndReleaseAreAcknowledged(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 20})
	m := mount(t, src.URL(), "--poll-interval", "0")
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(m.dir, link))
	other := []string{"XDG_RUNTIME_DIR=" + t.TempDir()}

	out, stderr, code := rsfsEnv(t, other, "hold", link, "--for", "1h")
	require.Equal(t, 0, code, "hold: %s", stderr)
	assert.Contains(t, out, "changes held back at "+m.dir+" until ")
	st := readStatus(t, m.dir)
	require.NotNil(t, st.Hold, "the mount shows the hold")
	assert.WithinDuration(t, time.Now().Add(time.Hour), st.Hold.Until, time.Minute)

	out, stderr, code = rsfsEnv(t, []string{"XDG_RUNTIME_DIR=" + t.TempDir()}, "release", m.dir)
	require.Equal(t, 0, code, "release: %s", stderr)
	assert.Equal(t, "changes at "+m.dir+" are applied again\n", out)
	assert.Nil(t, readStatus(t, m.dir).Hold)
	out, _, code = rsfsEnv(t, nil, "release", m.dir)
	assert.Equal(t, 0, code)
	assert.Equal(t, "no hold at "+m.dir+"\n", out)

	plain := t.TempDir()
	for _, cmd := range []string{"hold", "release"} {
		_, stderr, code = rsfsEnv(t, nil, cmd, plain)
		assert.Equal(t, 1, code, cmd)
		assert.Contains(t, stderr, "is not the root of an rsfs mount", cmd)
	}
	_, stderr, code = rsfsEnv(t, nil, "hold", m.dir, "--for", "-1h")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--for -1h0m0s: want a duration above 0")
	assert.Nil(t, readStatus(t, m.dir).Hold)
}

// A mount logs to a file of its own, named after its mount point; every
// line names the Source and the mount point, and the mount says which
// version mounted.
func TestEachMountLogsToItsOwnFile(t *testing.T) {
	needFUSE(t)
	src := startSource(t, sourcetest.Config{Resources: 20})
	cacheHome := t.TempDir()
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "one"), filepath.Join(base, "two-2")}
	env := []string{"XDG_CACHE_HOME=" + cacheHome}
	for _, dir := range dirs {
		require.NoError(t, os.Mkdir(dir, 0o755))
		_, stderr, code := rsfsEnv(t, env, "mount", src.URL(), dir, "--cache-dir", "none", "--poll-interval", "0", "--log-format", "json")
		require.Equal(t, 0, code, "mount: %s", stderr)
		m := &mounted{url: src.URL(), dir: dir}
		t.Cleanup(func() { m.unmount(t) })
	}
	escaped := map[string]string{
		dirs[0]: strings.ReplaceAll(strings.TrimPrefix(dirs[0], "/"), "/", "-"),
		dirs[1]: strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(dirs[1], "/"), "-", `\x2d`), "/", "-"),
	}
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(cacheHome, "rsfs", "logs", escaped[dir]+".log"))
		require.NoError(t, err, "the log of %s", dir)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.NotEmpty(t, lines)
		var mounted bool
		for _, line := range lines {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &rec), "every line is JSON: %s", line)
			assert.Equal(t, src.URL(), rec["source"], line)
			assert.Equal(t, dir, rec["mount"], line)
			if rec["msg"] == "mounted" {
				mounted = true
				assert.NotEmpty(t, rec["version"], line)
			}
		}
		assert.True(t, mounted, "a mounted line: %s", data)
	}
}
