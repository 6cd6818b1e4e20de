// Package e2e tests rsfs end to end: the real binary, a real FUSE mount, a
// real Source on 127.0.0.1 (tests/sourcetest) and the tools people use.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

var rsfsBin string

// fuseDevice is the device a mount needs. RSFS_E2E_FUSE_DEVICE names
// another path, to see how the suite behaves without FUSE (e.g. set it to
// /nonexistent): the mount tests skip, the others still run.
var fuseDevice = "/dev/fuse"

// fuseMissing is why no mount can be made here, or nil.
var fuseMissing error

// Which tests run in parallel: a test that waits on its own mount's polls
// against its own Source calls t.Parallel first, so that their waits
// overlap (issue 44: the suite's time). A test stays serial when it times a
// server's limits (throttle, rates, offline), measures the machine (CPU at
// rest, peak RSS), sets the environment (t.Setenv), shares a server or
// package state (faults' matrix), or switches users and namespaces.
func TestMain(m *testing.M) {
	if dev := os.Getenv("RSFS_E2E_FUSE_DEVICE"); dev != "" {
		fuseDevice = dev
	}
	fuseMissing = checkFUSE(fuseDevice)
	dir, err := os.MkdirTemp("", "rsfs-e2e-bin")
	if err != nil {
		panic(err)
	}
	rsfsBin = filepath.Join(dir, "rsfs")
	build := exec.Command("go", "build", "-o", rsfsBin, "rsfs/cmd/rsfs")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Println("building rsfs:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// checkFUSE reports why dev cannot serve a mount: it must open for reading
// and writing, as the mount does.
func checkFUSE(dev string) error {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("FUSE is not available: %w", err)
	}
	return f.Close()
}

// needFUSE skips a test that mounts when FUSE is not available, so the
// suite reports SKIP for it instead of passing.
func needFUSE(t *testing.T) {
	t.Helper()
	if fuseMissing != nil {
		t.Skipf("needs a FUSE mount: %v", fuseMissing)
	}
}

// startSource starts a test Source and stops it when the test ends.
func startSource(t *testing.T, cfg sourcetest.Config) *sourcetest.Source {
	t.Helper()
	src, err := sourcetest.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(src.Close)
	return src
}

// run runs a command with a deadline and returns its stdout, stderr and error.
func run(t *testing.T, timeout time.Duration, name string, args ...string) (string, string, error) {
	t.Helper()
	return runCmd(timeout, nil, name, args...)
}

// runCmd runs name with args and extra environment variables (none: the
// test's own), killed after timeout, and returns its stdout and stderr.
func runCmd(timeout time.Duration, env []string, name string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %v: timed out after %s: %w", name, args, timeout, ctx.Err())
	}
	return out.String(), errb.String(), err
}

// mounted is a running rsfs mount.
type mounted struct {
	url     string
	dir     string
	logFile string
}

// pid returns the process serving the mount.
func (m *mounted) pid(t *testing.T) int {
	t.Helper()
	out, _, err := run(t, 10*time.Second, "pgrep", "-f", "rsfs mount "+m.url+" "+m.dir+" ")
	require.NoError(t, err, "no rsfs process serves %s", m.dir)
	pids := strings.Fields(out)
	require.Len(t, pids, 1)
	return atoi(t, pids[0])
}

// allowOtherHost is the flag that lets rsfs read the awkward resource the
// test Source publishes on another host form (http://localhost:PORT).
func allowOtherHost(src *sourcetest.Source) []string {
	return []string{"--allow-host", strings.Replace(strings.TrimSuffix(src.URL(), "/"), "127.0.0.1", "localhost", 1)}
}

// mount runs `rsfs mount URL DIR` (in the background, as a user would) and
// unmounts in t.Cleanup.
func mount(t *testing.T, url string, extra ...string) *mounted {
	t.Helper()
	return mountWithin(t, 2*time.Minute, url, extra...)
}

// mountWithin is mount with another bound on the mount command: a Source
// of a million resources loads in about 20 s of one core, so on a machine
// loaded many times over (stress-ng beside parallel tests) it needs more
// than mount's 2 minutes without hanging.
func mountWithin(t *testing.T, bound time.Duration, url string, extra ...string) *mounted {
	t.Helper()
	needFUSE(t)
	dir := t.TempDir()
	m := &mounted{url: url, dir: filepath.Join(dir, "mnt"), logFile: filepath.Join(dir, "rsfs.log")}
	require.NoError(t, os.Mkdir(m.dir, 0o755))
	args := append([]string{"mount", url, m.dir, "--log-file", m.logFile, "--cache-dir", filepath.Join(dir, "cache")}, extra...)
	_, stderr, err := run(t, bound, rsfsBin, args...)
	if err != nil {
		log, _ := os.ReadFile(m.logFile)
		require.NoError(t, err, "rsfs mount: %s\nrsfs log:\n%s", stderr, log)
	}
	t.Cleanup(func() { m.unmount(t) })
	return m
}

func (m *mounted) unmount(t *testing.T) {
	if !isMountPoint(m.dir) {
		return
	}
	pid := m.pid(t)
	_, stderr, err := run(t, 30*time.Second, "umount", m.dir)
	if err != nil {
		t.Logf("umount %s: %v %s; detaching", m.dir, err, stderr)
		_ = syscall.Unmount(m.dir, syscall.MNT_DETACH)
	}
	// The server saves its snapshot as it exits: wait for it.
	waitFor(t, hangBound, "rsfs to exit", func() bool { return exited(pid) })
	if log, err := os.ReadFile(m.logFile); err == nil && t.Failed() {
		t.Logf("rsfs log:\n%s", log)
	}
}

// path is rel under the mount point.
func (m *mounted) path(rel string) string { return filepath.Join(m.dir, rel) }

// isMountPoint reports whether dir is in /proc/self/mounts.
func isMountPoint(dir string) bool {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exited reports whether a process is gone or a zombie (its parent, not
// this test, reaps it).
func exited(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	return len(fields) == 0 || fields[0] == "Z"
}
