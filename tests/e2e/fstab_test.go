package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// fstabNS is a private mount namespace in which /etc/fstab is a line of
// the test's, /etc/passwd gives the test user a home, and the directory
// /bin/sh searches first without $PATH (/usr/local/sbin) holds rsfs: the
// machine's own files are never touched. Commands run in it through
// nsenter; the namespace lives as long as its holder process.
type fstabNS struct {
	holder *exec.Cmd
	pid    int
}

// newFstabNS makes the namespace, with fstab, passwd and the directory
// for /usr/local/sbin bind-mounted over the machine's, and ends it (and
// any mount in it) in t.Cleanup.
func newFstabNS(t *testing.T, fstab, passwd, sbin string) *fstabNS {
	t.Helper()
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("skipping: needs nsenter and unshare (util-linux)")
	}
	script := fmt.Sprintf("mount --bind %s /etc/fstab && mount --bind %s /etc/passwd && mount --bind %s /usr/local/sbin && echo ready && exec sleep 600",
		fstab, passwd, sbin)
	holder := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	holder.Stderr = &stderr
	require.NoError(t, holder.Start())
	ns := &fstabNS{holder: holder, pid: holder.Process.Pid}
	t.Cleanup(ns.close)
	buf := make([]byte, 6)
	n, _ := out.Read(buf)
	require.Equal(t, "ready\n", string(buf[:n]), "the namespace: %s", stderr.String())
	return ns
}

// close kills what serves a mount left in the namespace, and the holder;
// the namespace, its binds and its mounts end with its last process.
func (ns *fstabNS) close() {
	out, _ := exec.Command("pgrep", "-f", "^/usr/local/sbin/rsfs-real ").Output()
	for _, pid := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(pid); err == nil && sameMountNS(p, ns.pid) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	_ = ns.holder.Process.Kill()
	_ = ns.holder.Wait()
}

// sameMountNS reports whether processes a and b share a mount namespace.
func sameMountNS(a, b int) bool {
	la, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", a))
	lb, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", b))
	return err1 == nil && err2 == nil && la == lb
}

// runAs runs name in the namespace as uid with env (and nothing else), and
// returns its stdout, stderr and error.
func (ns *fstabNS) runAs(t *testing.T, uid int, env []string, timeout time.Duration, name string, args ...string) (string, string, error) {
	t.Helper()
	argv := append([]string{"--target", strconv.Itoa(ns.pid), "--mount", "--",
		"setpriv", "--reuid", strconv.Itoa(uid), "--regid", strconv.Itoa(uid), "--clear-groups",
		"env", "-i"}, env...)
	return run(t, timeout, "nsenter", append(argv, append([]string{name}, args...)...)...)
}

// mounted reports whether dir is a mount point in the namespace.
func (ns *fstabNS) mounted(dir string) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mounts", ns.pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == dir {
			return true
		}
	}
	return false
}

// TestFstabUserLine mounts as an ordinary user exactly as the line of
// docs/deployment.md is meant to be used: an /etc/fstab line with `user`,
// and `mount DIR` typed by that user, through mount(8) and mount.fuse3,
// which run rsfs with the environment they make (no PATH; a HOME that is
// not the user's). A wrapper named rsfs records what rsfs is given.
func TestFstabUserLine(t *testing.T) {
	u := newUserEnv(t)
	if _, err := os.Stat("/sbin/mount.fuse3"); err != nil {
		t.Skip("skipping: no /sbin/mount.fuse3 (Debian: apt install fuse3)")
	}
	src := startSource(t, sourcetest.Config{Resources: 20})
	res := src.Resources()

	// rsfs, as the package installs it, on the path /bin/sh searches
	// when mount.fuse3 runs it without PATH; the wrapper records argv,
	// environment and uid.
	sbin := filepath.Join(u.base, "sbin")
	require.NoError(t, os.Mkdir(sbin, 0o755))
	copyFile(t, rsfsBin, filepath.Join(sbin, "rsfs-real"), 0o755)
	capture := filepath.Join(u.base, "helper-call")
	wrapper := fmt.Sprintf(`#!/bin/sh
{ echo "uid $(id -u)"; for a; do echo "arg $a"; done; tr '\0' '\n' </proc/$$/environ | sed 's/^/env /'; } >%s
exec /usr/local/sbin/rsfs-real "$@"
`, capture)
	require.NoError(t, os.WriteFile(filepath.Join(sbin, "rsfs"), []byte(wrapper), 0o755))

	// The user's home is theirs in passwd; /root stays root's.
	passwd, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)
	lines := strings.Split(string(passwd), "\n")
	for i, l := range lines {
		if f := strings.Split(l, ":"); len(f) == 7 && f[2] == strconv.Itoa(nobody) {
			f[5] = u.home
			lines[i] = strings.Join(f, ":")
		}
	}
	passwdFile := filepath.Join(u.base, "passwd")
	require.NoError(t, os.WriteFile(passwdFile, []byte(strings.Join(lines, "\n")), 0o644))

	// The line of docs/deployment.md, for this Source and mount point
	// (allow_host: the test Source's awkward resource is on localhost).
	localhost := strings.Replace(strings.TrimSuffix(src.URL(), "/"), "127.0.0.1", "localhost", 1)
	line := fmt.Sprintf("%s %s fuse.rsfs noauto,user,_netdev,allow_host=%s 0 0\n", src.URL(), u.mnt, localhost)
	t.Logf("fstab line: %s", line)
	fstab := filepath.Join(u.base, "fstab")
	require.NoError(t, os.WriteFile(fstab, []byte(line), 0o644))
	ns := newFstabNS(t, fstab, passwdFile, sbin)

	// The user types `mount DIR` in their login shell: mount(8) is setuid
	// root and runs the helper as the user, with no PATH and root's HOME
	// whatever the user's.
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + u.home, "LANG=C"}
	stdout, stderr, err := ns.runAs(t, nobody, env, 2*time.Minute, "mount", u.mnt)
	call, _ := os.ReadFile(capture)
	t.Logf("mount %s: stdout %q stderr %q err %v", u.mnt, stdout, stderr, err)
	t.Logf("what mount(8) passed to the helper:\n%s", call)
	require.NoError(t, err, "mount %s as uid %d: %s", u.mnt, nobody, stderr)
	require.True(t, ns.mounted(u.mnt), "%s is mounted in the namespace", u.mnt)
	assert.Contains(t, string(call), fmt.Sprintf("uid %d\n", nobody), "mount(8) runs the helper as the user")
	assert.NotContains(t, string(call), "env PATH=", "mount(8) passes no PATH: the case this test is for")
	assert.Contains(t, string(call), "env HOME=/root\n", "mount(8) passes root's HOME: the case this test is for")

	// The log and the cache are under the user's home, from passwd.
	logFile := filepath.Join(u.home, ".cache", "rsfs", "logs", escapedMnt(u.mnt)+".log")
	log, err := os.ReadFile(logFile)
	require.NoError(t, err, "the log under the user's home")
	assert.Contains(t, string(log), "msg=mounted")
	assert.Regexp(t, `msg="environment completed, as mount\(8\) runs a helper without PATH or the user's HOME" .*set="\[PATH=/usr/local/sbin:\S+ HOME=`+u.home+`\]"`, string(log))
	st, err := os.Stat(filepath.Join(u.home, ".cache", "rsfs"))
	require.NoError(t, err)
	assert.Equal(t, uint32(nobody), st.Sys().(*syscall.Stat_t).Uid, "the cache is the user's")

	// The user reads the published bytes, and unmounts with umount(8).
	want, _ := src.Body(res[0].URI)
	got, stderr, err := ns.runAs(t, nobody, env, time.Minute, "cat", filepath.Join(u.mnt, strings.TrimPrefix(res[0].URI, src.URL())))
	require.NoError(t, err, "cat: %s", stderr)
	assert.Equal(t, string(want), got)
	_, stderr, err = ns.runAs(t, nobody, env, time.Minute, "umount", u.mnt)
	require.NoError(t, err, "umount %s as the user: %s", u.mnt, stderr)
	waitFor(t, 30*time.Second, "the mount to end", func() bool { return !ns.mounted(u.mnt) })

	// A shell with no HOME at all: the same.
	noHome := []string{"PATH=/usr/bin:/bin"}
	_, stderr, err = ns.runAs(t, nobody, noHome, 2*time.Minute, "mount", u.mnt)
	call, _ = os.ReadFile(capture)
	t.Logf("without HOME, what mount(8) passed to the helper:\n%s", call)
	require.NoError(t, err, "mount %s without HOME: %s", u.mnt, stderr)
	assert.Contains(t, string(call), "env HOME=/root\n")
	log, err = os.ReadFile(logFile)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(log), "msg=mounted"), "the second mount logs to the same file, under the user's home")
	_, stderr, err = ns.runAs(t, nobody, noHome, time.Minute, "umount", u.mnt)
	require.NoError(t, err, "umount: %s", stderr)
	waitFor(t, 30*time.Second, "the mount to end", func() bool { return !ns.mounted(u.mnt) })
}

// escapedMnt is systemd-escape --path of dir, as the log file is named.
func escapedMnt(dir string) string {
	out, err := exec.Command("systemd-escape", "--path", dir).Output()
	if err != nil {
		return strings.ReplaceAll(strings.Trim(dir, "/"), "/", "-")
	}
	return strings.TrimSpace(string(out))
}
