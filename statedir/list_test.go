package statedir

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// makeStateDir makes a state directory under base as a mount leaves it:
// its lock, its URL, size bytes of blocks, every file dated used.
func makeStateDir(t *testing.T, base, url string, size int, used time.Time) string {
	t.Helper()
	dir, err := Dir(base, url)
	require.NoError(t, err)
	l, err := LockDir(dir, "/mnt/x")
	require.NoError(t, err)
	l.close()
	require.NoError(t, WriteURL(dir, url))
	blocks := BlocksDir(dir)
	require.NoError(t, os.MkdirAll(blocks, 0o700))
	body := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{byte(size)}).Read(body) // incompressible, whatever the file system
	require.NoError(t, os.WriteFile(filepath.Join(blocks, "b1"), body, 0o600))
	dateStateDir(t, dir, used)
	return dir
}

// dateStateDir dates every file of a state directory made by makeStateDir.
func dateStateDir(t *testing.T, dir string, used time.Time) {
	t.Helper()
	blocks := BlocksDir(dir)
	for _, p := range []string{filepath.Join(blocks, "b1"), blocks, filepath.Join(dir, "lock"), filepath.Join(dir, URLFile), dir} {
		require.NoError(t, os.Chtimes(p, used, used))
	}
}

func names(dirs []Info) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, d.URL)
	}
	return out
}

func TestStateDirsListAndPrune(t *testing.T) {
	base := t.TempDir()
	now := time.Now()
	old := makeStateDir(t, base, "http://old.example/", 300<<10, now.Add(-40*24*time.Hour))
	mounted := makeStateDir(t, base, "http://mounted.example/", 100<<10, now.Add(-50*24*time.Hour))
	mid := makeStateDir(t, base, "http://mid.example/", 200<<10, now.Add(-10*24*time.Hour))
	recent := makeStateDir(t, base, "http://recent.example/", 100<<10, now.Add(-time.Hour))
	require.NoError(t, os.WriteFile(filepath.Join(base, "rsfs.log"), []byte("x"), 0o600)) // not a state dir
	held, err := LockDir(mounted, "/mnt/m")
	require.NoError(t, err)
	t.Cleanup(held.close)
	dateStateDir(t, mounted, now.Add(-50*24*time.Hour)) // mounted long ago, and idle since

	dirs, err := List(base)
	require.NoError(t, err)
	assert.Equal(t, []string{"http://mounted.example/", "http://old.example/", "http://mid.example/", "http://recent.example/"}, names(dirs), "least recently used first")
	assert.True(t, dirs[0].Mounted)
	assert.Equal(t, os.Getpid(), dirs[0].PID)
	assert.Equal(t, "/mnt/m", dirs[0].MountPoint)
	assert.False(t, dirs[1].Mounted)
	assert.GreaterOrEqual(t, dirs[1].Size, int64(300<<10))
	assert.WithinDuration(t, now.Add(-40*24*time.Hour), dirs[1].LastUsed, time.Second)

	// Dry run: nothing goes.
	pruned, _, err := Prune(base, PruneOptions{OlderThan: 30 * 24 * time.Hour, DryRun: true, Now: now})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://old.example/"}, names(pruned), "the mounted one is older, and kept")
	assert.DirExists(t, old)

	// By age.
	pruned, _, err = Prune(base, PruneOptions{OlderThan: 30 * 24 * time.Hour, Now: now})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://old.example/"}, names(pruned))
	assert.NoDirExists(t, old)
	assert.DirExists(t, mounted)

	// By total: the least recently used unheld go until the rest fit; Keep stays.
	pruned, total, err := Prune(base, PruneOptions{MaxTotal: 150 << 10, Keep: mid, Now: now})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://recent.example/"}, names(pruned), "mounted and kept ones stay")
	assert.NoDirExists(t, recent)
	assert.DirExists(t, mid)
	assert.Greater(t, total, int64(150<<10), "still above: the rest are held")

	// Released, the mounted one can go.
	held.close()
	pruned, _, err = Prune(base, PruneOptions{MaxTotal: 1, Now: now})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://mounted.example/", "http://mid.example/"}, names(pruned))
	entries, err := os.ReadDir(base)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only rsfs.log, no .pruning- leftovers")
}

func TestResolveMigratesTheLegacyDir(t *testing.T) {
	base := t.TempDir()
	const typed = "HTTP://Example.org:80"
	legacy, err := LegacyDir(base, typed)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(legacy, 0o700))
	require.NoError(t, os.WriteFile(SnapshotPath(legacy), []byte("snap"), 0o600))

	// Held by a mount of an earlier rsfs: left alone.
	held, err := LockDir(legacy, "/mnt/old")
	require.NoError(t, err)
	dir, err := Resolve(base, typed)
	require.NoError(t, err)
	assert.NotEqual(t, legacy, dir)
	assert.DirExists(t, legacy)
	held.close()

	// Free: moved to the canonical name, with its snapshot.
	dir, err = Resolve(base, typed)
	require.NoError(t, err)
	want, _ := Dir(base, "http://example.org/")
	assert.Equal(t, want, dir)
	assert.NoDirExists(t, legacy)
	b, err := os.ReadFile(SnapshotPath(dir))
	require.NoError(t, err)
	assert.Equal(t, "snap", string(b))

	// Every spelling now finds it.
	for _, u := range []string{"http://example.org/", "http://example.org/.well-known/resourcesync"} {
		d, err := Resolve(base, u)
		require.NoError(t, err)
		assert.Equal(t, dir, d, u)
	}

	// A legacy directory beside an existing canonical one stays where it is.
	require.NoError(t, os.MkdirAll(legacy, 0o700))
	_, err = Resolve(base, typed)
	require.NoError(t, err)
	assert.DirExists(t, legacy)
}
