package statedir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDir(t *testing.T) {
	// printf %s KEY | sha256sum | cut -c1-16, KEY = Key(url) = http://example.org/
	const url = "http://example.org/.well-known/resourcesync"
	const name = "781bc04ec9bd049c"

	dir, err := Dir("/var/tmp/rsfs", url)
	require.NoError(t, err)
	assert.Equal(t, "/var/tmp/rsfs/"+name, dir)

	t.Setenv("XDG_CACHE_HOME", "/home/u/.cache")
	dir, err = Dir("", url)
	require.NoError(t, err)
	assert.Equal(t, "/home/u/.cache/rsfs/"+name, dir)

	dir, err = Dir(None, url)
	require.NoError(t, err)
	assert.Equal(t, "", dir, "remembering off")

	other, err := Dir("/var/tmp/rsfs", "https://example.org/")
	require.NoError(t, err)
	assert.Equal(t, "/var/tmp/rsfs/8198d1bac40a1033", other)

	// The name an earlier rsfs gave: the URL as typed.
	legacy, err := LegacyDir("/var/tmp/rsfs", url)
	require.NoError(t, err)
	assert.Equal(t, "/var/tmp/rsfs/997d30b7a6586a94", legacy)
}

func TestKeyOneSourceOneKey(t *testing.T) {
	for _, spelling := range []string{
		"http://example.org/", "http://example.org", "HTTP://Example.ORG:80/",
		"http://example.org:80", "http://user:pw@example.org/#top",
		"http://example.org/.well-known/resourcesync", "http://EXAMPLE.org:80/.well-known/resourcesync",
	} {
		assert.Equal(t, "http://example.org/", Key(spelling), spelling)
		d1, _ := Dir("/c", spelling)
		d2, _ := Dir("/c", "http://example.org/")
		assert.Equal(t, d2, d1, spelling)
	}
	for in, want := range map[string]string{
		"https://h:443/rs/capabilitylist.xml":   "https://h/rs/capabilitylist.xml",
		"https://h:8443/":                       "https://h:8443/",
		"http://h/a/?q=1":                       "http://h/a/?q=1",
		"http://h/.well-known/resourcesync?x=1": "http://h/?x=1",
		"http://h/Capability.XML":               "http://h/Capability.XML",
		"not a url":                             "not a url",
	} {
		assert.Equal(t, want, Key(in), in)
	}
	assert.NotEqual(t, Key("http://h/"), Key("https://h/"))
	assert.NotEqual(t, Key("http://h/"), Key("http://h:8080/"))
}

func TestWriteURL(t *testing.T) {
	dir := t.TempDir()
	assert.Equal(t, "", ReadURL(dir))
	require.NoError(t, WriteURL(dir, "HTTP://H:80/.well-known/resourcesync"))
	assert.Equal(t, "http://h/", ReadURL(dir))
	require.NoError(t, WriteURL(dir, "http://h"))
	assert.Equal(t, "http://h/", ReadURL(dir))
}

func TestRootWithoutHomeCachesUnderVarCache(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	dir, err := UserCacheDir()
	require.NoError(t, err)
	assert.Equal(t, "/var/cache", dir)
}

// A mount that fails removes the state directory it created, or one an
// earlier failed mount left (a lock naming a dead process, the URL, an
// empty disk cache), but keeps one that remembers a Source.
func TestAbandon(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "0123456789abcdef")
	l, err := Take(dir, "/mnt/a", "http://example.org/", 0)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(BlocksDir(dir), 0o700))
	l.Abandon()
	entries, err := os.ReadDir(base)
	require.NoError(t, err)
	assert.Empty(t, entries, "the directory the failed mount created is gone")

	require.NoError(t, os.MkdirAll(BlocksDir(dir), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lock"), []byte("999999\n/mnt/a\n"), 0o600))
	require.NoError(t, WriteURL(dir, "http://example.org/"))
	l, err = Take(dir, "/mnt/a", "http://example.org/", 0)
	require.NoError(t, err)
	l.Abandon()
	entries, err = os.ReadDir(base)
	require.NoError(t, err)
	assert.Empty(t, entries, "the leftovers of an earlier failed mount are gone")

	l, err = Take(dir, "/mnt/a", "http://example.org/", 0)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(SnapshotPath(dir), []byte("snapshot"), 0o600))
	l.Release()
	l, err = Take(dir, "/mnt/a", "http://example.org/", 0)
	require.NoError(t, err)
	l.Abandon()
	_, err = os.Stat(SnapshotPath(dir))
	assert.NoError(t, err, "a directory that remembers the Source is kept")
	lock, err := os.ReadFile(filepath.Join(dir, "lock"))
	require.NoError(t, err)
	assert.Empty(t, string(lock), "and its lock names no process")
}
