package fs

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/tests/wait"
)

// lookupCounter counts the LOOKUPs that reach rsfs, by name.
type lookupCounter struct {
	*FS
	mu    sync.Mutex
	names map[string]int
}

func (c *lookupCounter) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	c.mu.Lock()
	c.names[name]++
	c.mu.Unlock()
	return c.FS.Lookup(cancel, h, name, out)
}

func (c *lookupCounter) of(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[name]
}

// mountCounting mounts tf read-only behind a lookupCounter.
func mountCounting(t *testing.T, tf *testFS) (string, *lookupCounter) {
	t.Helper()
	c := &lookupCounter{FS: tf.fs, names: map[string]int{}}
	return mountRaw(t, tf, c, true, nil), c
}

// A missing name probed again and again (a compiler's include path, a
// Python import, make) costs one LOOKUP: the kernel keeps the negative
// entry for the entry timeout, and every stat still sees ENOENT.
func TestMissingNameCostsOneLookup(t *testing.T) {
	tf := newTestFS(t)
	dir, lookups := mountCounting(t, tf)
	missing := filepath.Join(dir, "data", "missing.h")
	for range 1000 {
		var st syscall.Stat_t
		require.ErrorIs(t, syscall.Stat(missing, &st), syscall.ENOENT)
	}
	assert.Equal(t, 1, lookups.of("missing.h"), "1,000 stats of a missing name")
	assert.Equal(t, 1, lookups.of("data"), "and of its directory")
}

// A change that creates a name the kernel keeps a negative entry for drops
// that entry (EntryNotify), so the file shows within the test though the
// kernel's entries last a minute: a file in a directory that exists, and
// one in a directory the change creates, whose name was looked up missing
// too.
func TestCreatedNameDropsItsNegativeEntry(t *testing.T) {
	tf := newTestFS(t)
	dir, lookups := mountCounting(t, tf)
	created := filepath.Join(dir, "data", "new.txt")
	deep := filepath.Join(dir, "data", "fresh", "deeper", "f.txt")
	for _, p := range []string{created, deep, filepath.Join(dir, "data", "fresh")} {
		for range 2 {
			_, err := os.Stat(p)
			require.ErrorIs(t, err, os.ErrNotExist, p)
		}
	}
	require.Equal(t, 1, lookups.of("new.txt"), "the negative entry is cached")
	require.Equal(t, 1, lookups.of("fresh"), "the negative entry is cached")

	for uri, body := range map[string]string{
		testOrigin + "/data/new.txt":            "new\n",
		testOrigin + "/data/fresh/deeper/f.txt": "deep\n",
	} {
		tf.origin.Set(uri, []byte(body))
		tf.fs.Notify(tf.cat.Upsert(&catalog.Resource{URI: uri, Length: int64(len(body))}))
	}
	wait.For(t, "the created file", func() bool {
		got, err := os.ReadFile(created)
		return err == nil && string(got) == "new\n"
	})
	wait.For(t, "the file in a created directory", func() bool {
		got, err := os.ReadFile(deep)
		return err == nil && string(got) == "deep\n"
	})
	_, err := os.Stat(filepath.Join(dir, "data", "fresh", "other"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "the created directory answers a missing name as any other")
}

// changeInLookup applies a change while the kernel waits for the answer to
// the first LOOKUP of name, after rsfs found the name missing: the
// change's EntryNotify reaches the kernel before the negative entry does.
type changeInLookup struct {
	*FS
	name   string
	change func()
	once   sync.Once
}

func (c *changeInLookup) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := c.FS.Lookup(cancel, h, name, out)
	if name == c.name && out.NodeId == 0 {
		c.once.Do(func() {
			c.change()
			time.Sleep(100 * time.Millisecond) // the notifier sends meanwhile
		})
	}
	return st
}

// A change that creates a name while a LOOKUP of it is in flight, answered
// missing, still shows: the kernel holds the directory's lock while it
// waits for the LOOKUP's answer and an EntryNotify waits for that lock, so
// the notification drops the negative entry once it is made, never before.
func TestCreatedDuringItsLookupShows(t *testing.T) {
	tf := newTestFS(t)
	uri := testOrigin + "/data/racy.txt"
	tf.origin.Set(uri, []byte("racy\n"))
	c := &changeInLookup{FS: tf.fs, name: "racy.txt", change: func() {
		tf.fs.Notify(tf.cat.Upsert(&catalog.Resource{URI: uri, Length: 5}))
	}}
	dir := mountRaw(t, tf, c, true, nil)
	racy := filepath.Join(dir, "data", "racy.txt")
	_, err := os.Stat(racy)
	require.ErrorIs(t, err, os.ErrNotExist, "answered missing")
	wait.For(t, "the file created during its lookup", func() bool {
		got, err := os.ReadFile(racy)
		return err == nil && string(got) == "racy\n"
	})
}
