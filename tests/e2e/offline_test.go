package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rstatus "rsfs/status"
	"rsfs/tests/sourcetest"
)

// report is the mount's whole status, as `rsfs status --json` prints it.
func report(t *testing.T, dir string) rstatus.Report {
	t.Helper()
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	require.NoError(t, err, stderr)
	var rep rstatus.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep
}

func offline(t *testing.T, dir string) bool {
	u := report(t, dir).Unreachable
	return u != nil && u.Offline
}

// filesByDir is the mount's files (from walkFiles) sorted, with the
// directory of each.
func sortedFiles(files map[string]string) []string {
	var out []string
	for _, p := range files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// offlineReadBound bounds a read that needs a Source that stopped: it
// fails after --offline-wait (one --timeout, 1 s here), where the retries
// would take 5 s and more (5 attempts of 1 s, and their pauses). The 3 s
// of slack is for a loaded machine (2.05 s was seen under stress-ng).
const offlineReadBound = 4 * time.Second

// timedRead reads path and says how long it took.
func timedRead(path string) ([]byte, time.Duration, error) {
	start := time.Now()
	b, err := os.ReadFile(path)
	return b, time.Since(start), err
}

// The Source stops: a read that needs it fails with EIO within
// --offline-wait + 1 s; once the polls have failed over one --timeout the
// mount is offline: such a read fails at once, its log line names
// "offline since", files on disk and the tree are served as ever, and
// `rsfs status` says what is on disk. The Source back, the first poll
// that answers ends the state.
func TestOfflineIsAStateNotAStall(t *testing.T) {
	cfg := sourcetest.Config{Resources: 120, FanOut: 40, Seed: 7}
	src := startSource(t, cfg)
	addr := src.Addr()
	m := mount(t, src.URL(), "--timeout", "1s", "--poll-interval", "300ms")
	files := sortedFiles(walkFiles(t, m.dir))
	cached := files[0]
	want, err := os.ReadFile(cached)
	require.NoError(t, err)
	waitFor(t, hangBound, "the read file on disk", func() bool {
		return getxattr(t, cached, "user.rsfs.cached") == fmt.Sprintf("whole %d bytes", len(want))
	})
	assert.Equal(t, "none", getxattr(t, files[len(files)-1], "user.rsfs.cached"))

	src.Close()
	_, took, err := timedRead(files[len(files)-1])
	require.ErrorIs(t, err, syscall.EIO)
	assert.Less(t, took, offlineReadBound, "EIO within --offline-wait (1s), not after the retries")
	waitFor(t, hangBound, "the mount to be offline", func() bool { return offline(t, m.dir) })

	_, took, err = timedRead(files[len(files)-2])
	require.ErrorIs(t, err, syscall.EIO)
	assert.Less(t, took, 300*time.Millisecond, "offline: a read that needs the network fails at once")
	log, _ := os.ReadFile(m.logFile)
	assert.Contains(t, string(log), "offline since")

	got, err := os.ReadFile(cached)
	require.NoError(t, err, "a file on disk is served as ever")
	assert.Equal(t, want, got)
	assert.Len(t, walkFiles(t, m.dir), len(files), "ls, stat and find work")

	whole, wholeBytes := 0, int64(0)
	for _, p := range files {
		var n int64
		if _, err := fmt.Sscanf(getxattr(t, p, "user.rsfs.cached"), "whole %d bytes", &n); err == nil {
			whole++
			wholeBytes += n
		}
	}
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", m.dir)
	require.NoError(t, err, stderr)
	assert.Regexp(t, fmt.Sprintf(`offline since \S+: %d of 120 files \(.* of .*\) on disk`, whole), out)
	rep := report(t, m.dir)
	require.NotNil(t, rep.Cache.OnDisk)
	assert.Equal(t, rstatus.Coverage{Files: 120, FilesOnDisk: whole, Bytes: rep.Cache.OnDisk.Bytes, BytesOnDisk: wholeBytes}, *rep.Cache.OnDisk)
	assert.False(t, rep.Unreachable.Hang, "refused, not hung")

	cfg.Addr = addr
	startSource(t, cfg)
	waitFor(t, hangBound, "the first answer to end the offline state", func() bool { return !offline(t, m.dir) })
	got, err = os.ReadFile(files[len(files)-1])
	require.NoError(t, err)
	assert.NotEmpty(t, got)
}

// hangAt accepts connections at addr and never answers, until the test
// ends.
func hangAt(t *testing.T, addr string) {
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err == nil {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
}

// A Source that accepts connections and never answers: a read fails
// within --offline-wait + 1 s, the mount goes offline after one attempt,
// a poll ends within --timeout × attempts, and the status names the hang
// and a fix that is not "raise --timeout".
func TestOfflineHungSource(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 60, Seed: 3})
	addr := src.Addr()
	m := mount(t, src.URL(), "--timeout", "1s", "--retries", "4", "--poll-interval", "300ms")
	files := sortedFiles(walkFiles(t, m.dir))
	src.Close()
	hangAt(t, addr)

	_, took, err := timedRead(files[len(files)-1])
	require.ErrorIs(t, err, syscall.EIO)
	assert.Less(t, took, offlineReadBound, "EIO within --offline-wait (1s), not after the retries")
	waitFor(t, hangBound, "the mount to be offline", func() bool { return offline(t, m.dir) })
	_, took, err = timedRead(files[len(files)-2])
	require.ErrorIs(t, err, syscall.EIO)
	assert.Less(t, took, 300*time.Millisecond)

	var rep rstatus.Report
	waitFor(t, hangBound, "a poll that failed against the hung Source", func() bool {
		rep = report(t, m.dir)
		return rep.Polls.Last != nil && rep.Polls.Last.After(rep.Unreachable.Since) && rep.Polls.Result != "ok"
	})
	assert.LessOrEqual(t, rep.Polls.LastTook, 5.5, "a poll ends within --timeout × attempts (1s × 5)")
	require.True(t, rep.Unreachable.Hang, "%+v", rep.Unreachable)
	assert.Contains(t, rep.Unreachable.Fix, "accepts connections")
	assert.NotContains(t, rep.Unreachable.Fix, "raise --timeout")
	out, _, err := run(t, 10*time.Second, rsfsBin, "status", m.dir)
	require.NoError(t, err)
	assert.Contains(t, out, "fix:")
	assert.NotContains(t, out, "(in -", "no next poll in the past")
}

// rsfs mount --offline mounts the snapshot and the disk cache without a
// request to the Source, running or not: the whole tree, files on disk
// read, others fail with EIO at once, and the status says so.
func TestMountOffline(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 200, Dumps: true, PerDump: 100})
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, src.URL(), dir, cacheDir)
	files := sortedFiles(walkFiles(t, m.dir))
	warmed := filepath.Dir(files[0])
	_, code := warmJSON(t, warmed)
	require.Equal(t, 0, code)
	want, err := os.ReadFile(files[0])
	require.NoError(t, err)
	m.unmount(t)

	src.ResetCounters()
	m = mountAt(t, src.URL(), dir, cacheDir, "--offline")
	assert.Len(t, walkFiles(t, m.dir), len(files), "the whole tree, from the snapshot")
	got, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Equal(t, want, got)
	n, eio := grepAll(t, warmed)
	assert.Positive(t, n)
	assert.Zero(t, eio, "every warmed file reads")
	_, took, err := timedRead(files[len(files)-1])
	require.ErrorIs(t, err, syscall.EIO)
	assert.Less(t, took, 300*time.Millisecond)
	assert.Equal(t, sourcetest.Counters{}, src.Counters(), "nothing asked of the Source")
	rep := report(t, m.dir)
	require.NotNil(t, rep.Unreachable)
	assert.True(t, rep.Unreachable.Offline)
	assert.Contains(t, rep.Unreachable.Fix, "--offline")
}
