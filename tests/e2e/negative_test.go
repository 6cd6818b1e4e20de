package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

const lookups = `rsfs_fuse_operation_duration_seconds_count{op="lookup"}`

// A name a compiler, an import or make probes again and again costs one
// LOOKUP: the kernel keeps the negative entry for the entry timeout (an
// hour), and every stat still sees ENOENT.
func TestMissingNameCostsOneLookup(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 10})
	addr := freeAddr(t)
	m := mount(t, src.URL(), "--metrics-addr", addr)
	missing := m.path("missing.h")
	before, _ := scrape(t, addr)
	for range 1000 {
		var st syscall.Stat_t
		require.ErrorIs(t, syscall.Stat(missing, &st), syscall.ENOENT)
	}
	after, _ := scrape(t, addr)
	assert.Equal(t, 1.0, after[lookups]-before[lookups], "LOOKUPs for 1,000 stats of a missing name")
}

// A file the Change List creates shows within a poll interval and a second
// of the change being applied, though the kernel was asked for its name
// (and for the directory a second file is created in) before, and keeps
// negative entries for an hour: the change's EntryNotify drops them. The
// mount's metrics say when the changes were applied (a file polled for
// would itself be looked up missing first); the wait for that only bounds
// a stalled machine.
func TestCreatedFileShowsAfterItWasLookedUpMissing(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 10})
	addr := freeAddr(t)
	m := mount(t, src.URL(), append(pollFlags, "--metrics-addr", addr)...)
	files := walkFiles(t, m.dir)
	dir := filepath.Dir(files[src.Resources()[0].URI])
	rel, err := filepath.Rel(m.dir, dir)
	require.NoError(t, err)
	created := filepath.Join(dir, "new.txt")
	inNewDir := filepath.Join(dir, "newdir", "f.txt")
	for _, p := range []string{created, inNewDir} {
		_, err := os.Stat(p)
		require.ErrorIs(t, err, os.ErrNotExist, "a negative entry the kernel now keeps")
	}

	_, err = src.Create("/"+rel+"/new.txt", []byte("created\n"))
	require.NoError(t, err)
	_, err = src.Create("/"+rel+"/newdir/f.txt", []byte("in a new directory\n"))
	require.NoError(t, err)
	start := time.Now()
	eventually(t, "the changes applied", func() bool {
		got, _ := scrape(t, addr)
		return got["rsfs_changes_applied_total"] == 2
	})
	applied := time.Since(start)
	// The kernel keeps a negative entry for an hour: a bound of seconds
	// tells a dropped entry from a kept one on any machine.
	bound := hangBound
	waitFor(t, bound, "the created file, after the change was applied", func() bool {
		got, err := os.ReadFile(created)
		return err == nil && string(got) == "created\n"
	})
	waitFor(t, bound, "the file in a created directory, after the change was applied", func() bool {
		got, err := os.ReadFile(inNewDir)
		return err == nil && string(got) == "in a new directory\n"
	})
	t.Logf("applied %s after the change, both visible %s after it",
		applied.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
