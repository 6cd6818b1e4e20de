package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// stateDirs lists what a --cache-dir holds besides the logs: the state
// directories (and anything else) a mount left.
func stateDirs(t *testing.T, cacheDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(cacheDir)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var left []string
	for _, e := range entries {
		if e.Name() != "logs" {
			left = append(left, e.Name())
		}
	}
	return left
}

// refusedURL is an http URL on 127.0.0.1 whose port refuses connections.
func refusedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr + "/"
}

// Each way a first mount fails (a 404, a URL that is not http, a refused
// port, a site that is no Source, ^C while loading) exits 1 with one line
// on stderr, leaves no state directory behind, and says in the log, in the
// log's format, which Source and mount point failed.
func TestAFailedMountLeavesNothingBehind(t *testing.T) {
	needFUSE(t)
	notASource := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>a web site</body></html>")
	}))
	t.Cleanup(notASource.Close)
	src := startSource(t, sourcetest.Config{Resources: 5})
	for _, c := range []struct {
		name, url string
		exit      int
	}{
		{"404", src.URL() + "no/such/list.xml", 1},
		// A URL of another scheme is a usage error (exit 2), refused
		// before anything starts: no log is opened.
		{"htp", "htp://127.0.0.1:8080/", 2},
		{"refused", refusedURL(t), 1},
		{"no Source", notASource.URL + "/", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, cacheDir := mountDir(t), filepath.Join(t.TempDir(), "cache")
			logFile := filepath.Join(t.TempDir(), "rsfs.log")
			_, stderr, err := run(t, time.Minute, rsfsBin, "mount", "--retries", "1", "--log-format", "json",
				"--cache-dir", cacheDir, "--log-file", logFile, c.url, dir)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "stderr: %s", stderr)
			assert.Equal(t, c.exit, exit.ExitCode())
			assert.Empty(t, stateDirs(t, cacheDir), "no state directory is left")
			assert.False(t, isMountPoint(dir))
			if c.exit == 2 {
				assert.NoFileExists(t, logFile)
				return
			}
			failed := lastJSONLine(t, logFile)
			assert.Equal(t, "ERROR", failed["level"])
			assert.Equal(t, c.url, failed["source"])
			assert.Equal(t, dir, failed["mount"])
		})
	}
	for _, mode := range []struct {
		name  string
		extra []string
	}{{"interrupted in the foreground", []string{"--foreground"}}, {"interrupted in the background", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			url := silentURL(t)
			dir, cacheDir := mountDir(t), filepath.Join(t.TempDir(), "cache")
			args := append([]string{"mount", url, dir, "--cache-dir", cacheDir, "--timeout", "30s",
				"--log-file", filepath.Join(t.TempDir(), "rsfs.log")}, mode.extra...)
			cmd := exec.Command(rsfsBin, args...)
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(stderr)
			// Loading has begun once the state directory is taken (not
			// at the precheck's write test, .write-test-*, which the
			// parent makes before it holds SIGINT).
			waitFor(t, hangBound, "the state directory", func() bool {
				return slices.ContainsFunc(stateDirs(t, cacheDir), func(n string) bool { return !strings.HasPrefix(n, ".") })
			})
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			for lines.Scan() {
			}
			err = cmd.Wait()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit)
			assert.Equal(t, 1, exit.ExitCode())
			assert.Empty(t, stateDirs(t, cacheDir), "no state directory is left once rsfs mount has exited")
		})
	}
}

// silentURL is a server that accepts connections and never answers.
func silentURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// lastJSONLine is the last line of the JSON log at path, decoded.
func lastJSONLine(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &obj), "log: %s", data)
	return obj
}

// A mount that works says so, on one line of stdout: how many resources,
// from where, at which mount point, and where its log is. The state directory
// it loaded is kept, and once it is unmounted its lock names no process.
func TestAMountThatWorkedSaysSo(t *testing.T) {
	needFUSE(t)
	src := startSource(t, sourcetest.Config{Resources: 1013})
	dir, cacheDir := mountDir(t), filepath.Join(t.TempDir(), "cache")
	logFile := filepath.Join(t.TempDir(), "rsfs.log")
	stdout, stderr, err := run(t, 2*time.Minute, rsfsBin, "mount", src.URL(), dir, "--cache-dir", cacheDir, "--log-file", logFile)
	require.NoError(t, err, stderr)
	m := &mounted{url: src.URL(), dir: dir, logFile: logFile}
	t.Cleanup(func() { m.unmount(t) })
	assert.Equal(t, "mounted 1,013 resources from "+src.URL()+" at "+dir+" (log: "+logFile+")\n", stdout, "on stdout")
	assert.Empty(t, stderr)

	m.unmount(t)
	kept := stateDirs(t, cacheDir)
	require.Len(t, kept, 1, "the loaded Source's state directory is kept")
	lock, err := os.ReadFile(filepath.Join(cacheDir, kept[0], "lock"))
	require.NoError(t, err)
	assert.Empty(t, string(lock), "the lock names no process once the mount has ended")
}

// SIGHUP to a foreground mount (as systemd runs it, and as a logrotate
// postrotate sends it) reopens the log file, and never unmounts.
func TestSIGHUPReopensTheLogAndNeverUnmounts(t *testing.T) {
	needFUSE(t)
	src := startSource(t, sourcetest.Config{Resources: 5})
	dir := mountDir(t)
	logFile := filepath.Join(t.TempDir(), "rsfs.log")
	cmd := exec.Command(rsfsBin, "mount", src.URL(), dir, "--foreground", "--cache-dir", "none", "--log-file", logFile)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	m := &mounted{url: src.URL(), dir: dir, logFile: logFile}
	t.Cleanup(func() {
		m.unmount(t)
		<-done
	})
	waitFor(t, time.Minute, "the mount", func() bool { return isMountPoint(dir) })

	rotated := logFile + ".1"
	require.NoError(t, os.Rename(logFile, rotated))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	waitFor(t, hangBound, "the log file reopened", func() bool {
		data, err := os.ReadFile(logFile)
		return err == nil && strings.Contains(string(data), "log file reopened (SIGHUP)")
	})
	assert.True(t, isMountPoint(dir), "still mounted after SIGHUP")
	res := src.Resources()[0]
	data, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(res.URI, src.URL())))
	require.NoError(t, err, "still serving after SIGHUP")
	want, _ := src.Body(res.URI)
	assert.Equal(t, want, data)
}

// A foreground mount with --log-format json, while the Source is down:
// every line on stderr is a JSON object, durations are seconds as floats,
// and the final error names the Source and the mount point.
func TestForegroundJSONIsPureJSON(t *testing.T) {
	url := refusedURL(t)
	dir := mountDir(t)
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", "--foreground", "--log-format", "json", "--retries", "2",
		"--cache-dir", "none", url, dir)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var objs []map[string]any
	for _, line := range lines {
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &obj), "a line that is not JSON: %q", line)
		objs = append(objs, obj)
	}
	retries := 0
	for _, obj := range objs {
		if obj["msg"] == "the Source does not answer; retrying" {
			retries++
			wait, ok := obj["wait"].(float64)
			require.True(t, ok, "wait is a number: %v", obj)
			assert.Less(t, wait, 60.0, "wait is in seconds, not nanoseconds: %v", obj)
		}
	}
	assert.Equal(t, 2, retries, "stderr: %s", stderr)
	last := objs[len(objs)-1]
	assert.Equal(t, "ERROR", last["level"])
	assert.Contains(t, last["msg"], "connection refused")
	assert.Equal(t, url, last["source"])
	assert.Equal(t, dir, last["mount"])
}

// staticSource serves a Source with nothing to follow, as the standard's
// examples write one (Source Description, Capability List, Resource List;
// no Change List), and two resources.
func staticSource(t *testing.T) *httptest.Server {
	t.Helper()
	docs := map[string]string{
		"/.well-known/resourcesync": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>{B}/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`,
		"/capabilitylist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{B}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{B}/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`,
		"/resourcelist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{B}/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
  <url><loc>{B}/res1</loc><lastmod>2013-01-02T13:00:00Z</lastmod><rs:md length="6" type="text/plain"/></url>
  <url><loc>{B}/res2</loc><lastmod>2013-01-02T14:00:00Z</lastmod><rs:md length="6" type="text/plain"/></url>
</urlset>`,
		"/res1": "first\n",
		"/res2": "other\n",
	}
	return serveDocs(t, docs)
}

// serveDocs serves docs by path, each with {B} replaced by the server's
// base URL.
func serveDocs(t *testing.T, docs map[string]string) *httptest.Server {
	t.Helper()
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, r.URL.Path, time.Time{}, strings.NewReader(strings.ReplaceAll(body, "{B}", base)))
	}))
	base = srv.URL
	t.Cleanup(srv.Close)
	return srv
}

// rsfs status of a Source with nothing to follow says so, with no zero
// time; it names the log; remounted from the snapshot while the Source is
// down, it says since when the Source has been unreachable, and no poll
// and no "behind 0s" are claimed.
func TestStatusSaysNothingToFollowAndUnreachableSince(t *testing.T) {
	needFUSE(t)
	srv := staticSource(t)
	url := srv.URL + "/"
	dir, cacheDir := mountDir(t), filepath.Join(t.TempDir(), "cache")
	logFile := filepath.Join(t.TempDir(), "rsfs.log")
	m := &mounted{url: url, dir: dir, logFile: logFile}
	mountOnce := func() {
		_, stderr, err := run(t, time.Minute, rsfsBin, "mount", url, dir, "--cache-dir", cacheDir, "--log-file", logFile, "--retries", "0")
		require.NoError(t, err, stderr)
	}
	mountOnce()
	t.Cleanup(func() { m.unmount(t) })
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", dir)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Log:        "+logFile+"\n")
	assert.Contains(t, out, "Following:  nothing to follow (no Change List)")
	assert.Contains(t, out, "    nothing to follow: it names no Change List\n")
	assert.NotContains(t, out, "0001-01-01")
	assert.NotContains(t, out, "\nUnreachable:")

	m.unmount(t)
	srv.Close()
	before := time.Now().UTC().Truncate(time.Second)
	mountOnce()
	out, stderr, err = run(t, 10*time.Second, rsfsBin, "status", dir)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Unreachable: since ")
	var st struct {
		Unreachable *struct {
			Since time.Time `json:"since"`
			Error string    `json:"error"`
		} `json:"unreachable"`
		LogFile string `json:"log_file"`
	}
	js, _, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(js), &st))
	require.NotNil(t, st.Unreachable, "status: %s", js)
	assert.False(t, st.Unreachable.Since.Before(before), "since the remount: %v", st.Unreachable.Since)
	assert.Contains(t, st.Unreachable.Error, "connection refused")
	assert.Equal(t, logFile, st.LogFile)
	assert.Contains(t, out, "Last poll:  none\n")
	assert.NotContains(t, out, "behind 0s")
}

// A read of a resource on another host, without --allow-host, fails with
// EIO; the log and rsfs status say it in one line each: the path, the URL
// once, the cause, and the flag that fixes it.
func TestAReadErrorNamesTheFix(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 5, Awkward: true})
	m := mount(t, src.URL())
	_, port, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(src.URL(), "/"), "http://"))
	require.NoError(t, err)
	other := "http://localhost:" + port
	path := "@localhost:" + port + "/awkward/otherhost.txt"
	_, err = os.ReadFile(m.path(path))
	require.ErrorIs(t, err, syscall.EIO)

	want := path + ": " + other + "/awkward/otherhost.txt: host not allowed (fix: mount with --allow-host " + other + " if that host is to be trusted)"
	st := readStatus(t, m.dir)
	require.NotEmpty(t, st.ReadErrors.Latest)
	assert.Equal(t, want, st.ReadErrors.Latest[0].Reason)
	// One read, listed once: the kernel's retry of it is not another.
	assert.Len(t, st.ReadErrors.Latest, 1, "%+v", st.ReadErrors)
	assert.Equal(t, 1, st.ReadErrors.InWindow)
	// Another reader's read is another.
	_, _, err = run(t, 10*time.Second, "cat", m.path(path))
	require.Error(t, err)
	st = readStatus(t, m.dir)
	assert.Equal(t, 2, st.ReadErrors.InWindow, "%+v", st.ReadErrors)
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	var line string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, `msg="read failed"`) {
			line = l
		}
	}
	require.NotEmpty(t, line, "log: %s", log)
	assert.Equal(t, 1, strings.Count(line, other+"/awkward/otherhost.txt"), "the URL once: %s", line)
	assert.Contains(t, line, `err="host not allowed" fix="mount with --allow-host `+other+` if that host is to be trusted"`)
}

// An ordinary user whose mount cannot be made or kept is told so before
// anything is downloaded, with the fix: /dev/fuse they cannot open (0600,
// in a private mount namespace where a 0600 node is bound over it), a mount
// point they cannot write, no writable cache directory for the log, an
// unwritable --cache-dir. The Source sees no request.
func TestUserPrechecksNameTheFixBeforeDownloading(t *testing.T) {
	u := newUserEnv(t)
	src := startSource(t, sourcetest.Config{Resources: 5})
	rootDir := filepath.Join(u.base, "roots")
	require.NoError(t, os.Mkdir(rootDir, 0o755)) // root's: the user may not write it
	readOnly := filepath.Join(u.base, "ro")
	require.NoError(t, os.Mkdir(readOnly, 0o555))
	node := filepath.Join(u.base, "fuse0600")
	require.NoError(t, syscall.Mknod(node, syscall.S_IFCHR|0o600, 10<<8|229))
	asUser := []string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin"}
	// A fusermount3 first on the PATH that is not setuid root.
	plainBin := filepath.Join(u.base, "bin")
	require.NoError(t, os.Mkdir(plainBin, 0o755))
	fusermount, err := exec.LookPath("fusermount3")
	require.NoError(t, err)
	copyFile(t, fusermount, filepath.Join(plainBin, "fusermount3"), 0o755)
	plainPath := []string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "env", "-i", "PATH=" + plainBin + ":/usr/local/bin:/usr/bin:/bin"}
	for _, c := range []struct {
		name string
		cmd  []string
		want string
	}{
		{"/dev/fuse 0600", append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$0" /dev/fuse && exec "$@"`, node},
			append(asUser, "HOME="+u.home, u.bin, "mount", src.URL(), u.mnt, "--log-file", u.logFile, "--cache-dir", u.cache)...),
			"rsfs: FUSE: cannot open /dev/fuse (mode 0600): permission denied: an administrator can make it 0666, as distributions ship it (chmod 0666 /dev/fuse), or mount as root\n"},
		{"fusermount3 not setuid", append(plainPath, "HOME="+u.home, u.bin, "mount", src.URL(), u.mnt, "--log-file", u.logFile, "--cache-dir", u.cache),
			"rsfs: FUSE: " + plainBin + "/fusermount3 is not setuid root (mode -rwxr-xr-x), so it cannot mount for a user who is not root: an administrator can restore it (chmod u+s " + plainBin + "/fusermount3, owned by root), or mount as root\n"},
		{"mount point", append(asUser, "HOME="+u.home, u.bin, "mount", src.URL(), rootDir, "--log-file", u.logFile, "--cache-dir", u.cache),
			"rsfs: mountpoint " + rootDir + ": not writable by you (owner uid 0, mode 0755): a user mounts only on a directory they can write; use a directory of your own (mkdir ~/mnt), or have this one chowned to you\n"},
		{"no home", append(asUser, "HOME=/nonexistent", u.bin, "mount", src.URL(), u.mnt),
			"rsfs: log file /nonexistent/.cache/rsfs/logs/" + strings.ReplaceAll(strings.ReplaceAll(strings.Trim(u.mnt, "/"), "-", `\x2d`), "/", "-") + ".log: mkdir /nonexistent: permission denied: set XDG_CACHE_HOME to a directory you can write, or pass --log-file\n"},
		{"cache dir", append(asUser, "HOME="+u.home, u.bin, "mount", src.URL(), u.mnt, "--log-file", u.logFile, "--cache-dir", filepath.Join(readOnly, "cache")),
			"rsfs: state directory: mkdir " + filepath.Join(readOnly, "cache") + ": permission denied: pass a --cache-dir you can write, or --cache-dir none to remember nothing\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src.ResetCounters()
			_, stderr, err := run(t, time.Minute, c.cmd[0], c.cmd[1:]...)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "stderr: %s", stderr)
			assert.Equal(t, 1, exit.ExitCode())
			assert.Equal(t, c.want, stderr)
			assert.Zero(t, src.Counters().Docs(), "nothing downloaded")
			assert.False(t, isMountPoint(u.mnt))
		})
	}
	st, err := os.Stat("/dev/fuse")
	require.NoError(t, err)
	assert.NotEqual(t, os.FileMode(0o600), st.Mode().Perm(), "the host's /dev/fuse is untouched")
}

// The warnings of a mount's loading are said on the terminal too, one line
// each; a warning that comes again is said once, with how many more the
// log has.
func TestLoadWarningsReachTheTerminalOnce(t *testing.T) {
	needFUSE(t)
	list := func(n int) string {
		return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{B}/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00"/>
  <url><loc>{B}/res` + strconv.Itoa(n) + `</loc><rs:md length="6"/></url>
</urlset>`
	}
	srv := serveDocs(t, map[string]string{
		"/.well-known/resourcesync": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>{B}/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`,
		"/capabilitylist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{B}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{B}/rl1.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{B}/rl2.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{B}/rl3.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`,
		"/rl1.xml": list(1), "/rl2.xml": list(2), "/rl3.xml": list(3),
		"/res1": "first\n", "/res2": "secnd\n", "/res3": "third\n",
	})
	url := srv.URL + "/"
	dir := mountDir(t)
	logFile := filepath.Join(t.TempDir(), "rsfs.log")
	stdout, stderr, err := run(t, time.Minute, rsfsBin, "mount", url, dir, "--cache-dir", "none", "--log-file", logFile)
	require.NoError(t, err, stderr)
	m := &mounted{url: url, dir: dir, logFile: logFile}
	t.Cleanup(func() { m.unmount(t) })
	// The Capability List names three Resource Lists (a capability named
	// thrice, §9): one more warning, of another kind, shown once.
	var warnings []string
	for _, line := range strings.Split(strings.TrimSpace(stdout+stderr), "\n") {
		if strings.HasPrefix(line, "rsfs: warning: ") && !strings.Contains(line, "capability named twice") {
			warnings = append(warnings, line)
		}
	}
	require.Len(t, warnings, 2, "output: %s%s", stdout, stderr)
	assert.Regexp(t, `^rsfs: warning: tolerated: datetime without time zone: 2013-01-03T09:00:00 \(url=`+srv.URL+`/rl\d\.xml line=4 clause=ResourceSync 1\.1 §7: .* reading=UTC assumed count=1\)$`, warnings[0])
	assert.Equal(t, "rsfs: warning: tolerated: datetime without time zone: 2013-01-03T09:00:00: 2 more in the log", warnings[1])
	assert.Equal(t, 1, strings.Count(stdout+stderr, "capability named twice"), "output: %s%s", stdout, stderr)
	log, err := os.ReadFile(logFile)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(log), "datetime without time zone"), "the log has each")
}

// A Source that stops answering while it is followed: rsfs status says it
// is unreachable since the first of the failed polls in a row, not the
// last (package status's TestReportSaysNoneAndUnreachableSince sees a poll that succeeds clear it).
func TestStatusSaysSinceWhenPollsFail(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 5})
	m := mount(t, src.URL(), "--poll-interval", "200ms", "--retries", "0", "--timeout", "1s")
	type polls struct {
		Unreachable *struct {
			Since time.Time `json:"since"`
		} `json:"unreachable"`
		Polls struct {
			Failures int64      `json:"failures"`
			Last     *time.Time `json:"last"`
		} `json:"polls"`
	}
	read := func() polls {
		out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", m.dir)
		require.NoError(t, err, stderr)
		var st polls
		require.NoError(t, json.Unmarshal([]byte(out), &st))
		return st
	}
	require.Nil(t, read().Unreachable)
	src.Close()
	// Wait on the log, not on the status, which would see each failure.
	waitFor(t, 30*time.Second, "two failed polls in a row", func() bool {
		log, _ := os.ReadFile(m.logFile)
		return strings.Contains(string(log), "failed_polls=2")
	})
	st := read()
	require.GreaterOrEqual(t, st.Polls.Failures, int64(2))
	require.NotNil(t, st.Unreachable)
	require.NotNil(t, st.Polls.Last)
	assert.True(t, st.Unreachable.Since.Before(*st.Polls.Last), "since the first failed poll (%v), not the last (%v)", st.Unreachable.Since, *st.Polls.Last)
}
