package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	first, err := LockDir(dir, "/mnt/a")
	require.NoError(t, err, "creates the directory and takes it")

	_, err = LockDir(dir, "/mnt/b")
	var locked *LockedError
	require.ErrorAs(t, err, &locked, "a second holder is refused")
	assert.Equal(t, os.Getpid(), locked.PID)
	assert.Equal(t, "/mnt/a", locked.Owner)
	assert.Equal(t, dir+" is in use by another rsfs mount (pid "+strconv.Itoa(os.Getpid())+", on /mnt/a)", err.Error())

	first.close()
	second, err := LockDir(dir, "/mnt/b")
	require.NoError(t, err, "free once released")
	defer second.close()
	data, err := os.ReadFile(filepath.Join(dir, "lock"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n/mnt/b\n", string(data), "the new holder replaced the record")
}

// A holder that is unmounted and closing is waited for, not refused; one
// still mounted is refused at once.
func TestLockDirWaitWaitsOnlyForAClosingHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	first, err := LockDir(dir, "/mnt/a")
	require.NoError(t, err)

	start := time.Now()
	_, err = lockWait(dir, "/mnt/b", 10*time.Second, func(*LockedError) { t.Error("waited for a holder that is still mounted") })
	var locked *LockedError
	require.ErrorAs(t, err, &locked, "a mounted holder is refused")
	assert.False(t, locked.Closing)
	assert.Less(t, time.Since(start), time.Second, "at once")

	first.Closing()
	data, err := os.ReadFile(filepath.Join(dir, "lock"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n/mnt/a\nclosing\n", string(data))

	_, err = lockWait(dir, "/mnt/b", 200*time.Millisecond, nil)
	require.ErrorAs(t, err, &locked, "still closing when the wait ends")
	assert.True(t, locked.Closing)
	assert.Equal(t, "still closing after 200ms: "+dir+" is in use by an rsfs mount that is closing (pid "+strconv.Itoa(os.Getpid())+", unmounted from /mnt/a)", err.Error())

	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		released <- time.Now()
		first.close()
	}()
	var waitedFor []*LockedError
	second, err := lockWait(dir, "/mnt/b", 10*time.Second, func(e *LockedError) { waitedFor = append(waitedFor, e) })
	require.NoError(t, err, "taken once the closing holder lets go")
	defer second.close()
	select {
	case at := <-released:
		assert.False(t, time.Now().Before(at), "not before it was released")
	default:
		t.Fatal("took the directory before the holder released it")
	}
	require.Len(t, waitedFor, 1, "told once that it waits")
	assert.Equal(t, "/mnt/a", waitedFor[0].Owner)
	data, err = os.ReadFile(filepath.Join(dir, "lock"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n/mnt/b\n", string(data), "the new holder's record, without the mark")
}

// A mount that waited for a closing holder longer than probeWait still
// takes the directory when the holder releases it: Release empties the
// record before it lets go, and that moment is not a probe that has held
// it since the wait began (CI, under load: "is in use by another rsfs
// mount" after a 3 s close).
func TestLockWaitOutlastsTheReleaseOfAClosingHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	first, err := LockDir(dir, "/mnt/a")
	require.NoError(t, err)
	first.Closing()
	sawEmpty := make(chan struct{})
	go func() {
		time.Sleep(probeWait + 300*time.Millisecond) // the waiter has waited longer than probeWait
		require.NoError(t, first.f.Truncate(0))      // Release, first step
		// Hold the empty record until the waiter has seen it.
		for {
			if _, err := LockDir(dir, "/mnt/c"); err != nil {
				var locked *LockedError
				if errors.As(err, &locked) && locked.PID == 0 {
					break
				}
			}
			time.Sleep(closingPoll)
		}
		time.Sleep(3 * closingPoll)
		close(sawEmpty)
		first.close()
	}()
	second, err := lockWait(dir, "/mnt/b", 30*time.Second, nil)
	require.NoError(t, err, "taken once the closing holder lets go")
	defer second.close()
	select {
	case <-sawEmpty:
	default:
		t.Fatal("took the directory before the holder released it")
	}
}

func TestLockDirUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := LockDir(filepath.Join(file, "state"), "/mnt/a")
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ENOTDIR)
}

// A mount that starts while rsfs cache list probes the lock (probe,
// which names no process) waits for the probe rather than being refused;
// a holder's Release leaves a lock that names no process.
func TestLockDirWaitWaitsForAProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	first, err := LockDir(dir, "/mnt/a")
	require.NoError(t, err)
	first.Release()
	data, err := os.ReadFile(filepath.Join(dir, "lock"))
	require.NoError(t, err)
	assert.Empty(t, string(data), "released: the lock names no process")

	p, err := probe(dir)
	require.NoError(t, err)
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		close(released)
		p.close()
	}()
	second, err := lockWait(dir, "/mnt/b", time.Minute, func(*LockedError) { t.Error("a probe is not a closing mount") })
	require.NoError(t, err, "taken once the probe lets go")
	defer second.close()
	select {
	case <-released:
	default:
		t.Fatal("took the directory before the probe released it")
	}
}

// The lock a mount takes is the one lock listing and pruning look at: a
// held state directory is listed as mounted, with its holder, and kept by a
// prune of every one; a second mount is refused; once released, it is
// listed as free and pruned.
func TestTakeIsTheLockListAndPruneSee(t *testing.T) {
	base := t.TempDir()
	const url = "http://example.org/"
	dir, err := Dir(base, url)
	require.NoError(t, err)
	l, err := Take(dir, "/mnt/a", url, 0)
	require.NoError(t, err)

	dirs, err := List(base)
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	assert.True(t, dirs[0].Mounted)
	assert.Equal(t, os.Getpid(), dirs[0].PID)
	assert.Equal(t, "/mnt/a", dirs[0].MountPoint)
	assert.Equal(t, url, dirs[0].URL)

	pruned, _, err := Prune(base, PruneOptions{All: true, Now: time.Now()})
	require.NoError(t, err)
	assert.Empty(t, pruned, "a held state directory is kept")
	_, err = Take(dir, "/mnt/b", url, 0)
	var locked *LockedError
	require.ErrorAs(t, err, &locked, "a second mount is refused")
	assert.Equal(t, "/mnt/a", locked.Owner)

	l.Release()
	dirs, err = List(base)
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	assert.False(t, dirs[0].Mounted, "released")
	pruned, _, err = Prune(base, PruneOptions{All: true, Now: time.Now()})
	require.NoError(t, err)
	assert.Len(t, pruned, 1, "a released state directory is pruned")
	assert.NoDirExists(t, dir)
}
