package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

func TestSetLengthOnlyOnTheVersionWithoutOne(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	uri := testOrigin + "/a/unsized"
	require.NoError(t, c.Add(&Resource{URI: uri, Length: resourcesync.NoLength, Lastmod: t1}))
	require.NoError(t, c.Seal())
	id, ok := c.ByURI(uri)
	require.True(t, ok)
	a, _ := c.Attr(id)
	assert.True(t, a.NoSize)
	assert.Zero(t, a.Size)
	assert.Equal(t, 1, c.Unsized())

	_, ok = c.SetLength(id, a.Gen+1, 9)
	assert.False(t, ok, "another version is not changed")
	now, ok := c.SetLength(id, a.Gen, 9)
	require.True(t, ok)
	assert.False(t, now.NoSize)
	assert.Equal(t, int64(9), now.Size)
	assert.NotEqual(t, a.Gen, now.Gen)
	assert.Equal(t, int64(9), c.Stats().Bytes)
	assert.Zero(t, c.Unsized())
	_, ok = c.SetLength(id, now.Gen, 10)
	assert.False(t, ok, "a known length is not replaced")

	// A reload lists the same version without a length again: the learned
	// length stays, and nothing changed.
	assert.Empty(t, c.Upsert(&Resource{URI: uri, Length: resourcesync.NoLength, Lastmod: t1}))
	again, _ := c.Attr(id)
	assert.Equal(t, now, again)
	// A new version without a length has none.
	assert.NotEmpty(t, c.Upsert(&Resource{URI: uri, Length: resourcesync.NoLength, Lastmod: t2}))
	newer, _ := c.Attr(id)
	assert.True(t, newer.NoSize)
	assert.Zero(t, c.Stats().Bytes)
}

func TestANewFileWithoutLengthOrLastmodHasNoSize(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	require.NoError(t, c.Add(&Resource{URI: testOrigin + "/listed", Length: resourcesync.NoLength}))
	require.NoError(t, c.Seal())
	c.Upsert(&Resource{URI: testOrigin + "/changed", Length: resourcesync.NoLength})
	for _, u := range []string{"/listed", "/changed"} {
		id, ok := c.ByURI(testOrigin + u)
		require.True(t, ok)
		a, _ := c.Attr(id)
		assert.True(t, a.NoSize, u)
	}
}
