package atomfeed

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
	"rsfs/tests/atomsource"
)

// A follower rebuilt from its snapshot shows the same tree without a
// request, then catches up with one conditional GET.
func TestSnapshotRestore(t *testing.T) {
	fx := start(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		require.NoError(t, fx.src.Create(n, "Record "+n, xml, txt))
	}
	require.NoError(t, fx.fl.Load(testCtx(t)))
	require.NoError(t, fx.src.Delete("b"))
	require.NoError(t, fx.src.Update("a", "A", txt2))
	require.NoError(t, fx.fl.Poll(testCtx(t)))
	data, err := fx.fl.Snapshot()
	require.NoError(t, err)

	fx.src.ResetRequests()
	client := fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})
	feed, err := New(fx.src.URL(), Options{Client: client, Logger: quiet})
	require.NoError(t, err)
	restored, err := feed.Restore(data)
	require.NoError(t, err)
	fl := restored.Follow(FollowOptions{})
	assert.Equal(t, fx.src.Pool(), tree(t, fl.Catalog()))
	assert.Equal(t, tree(t, fx.cat), tree(t, fl.Catalog()))
	assert.Zero(t, fx.src.DocumentRequests()+fx.src.Requests("/rec/a.txt")+fx.src.Requests("/rec/c.xml"), "nothing fetched")
	id, _, ok := lookup(fl.Catalog(), "rec", "a.txt")
	require.True(t, ok)
	r, _ := fl.Catalog().Resource(id)
	assert.Equal(t, int64(len(txt2.Body)), r.Length)

	require.NoError(t, fl.Poll(testCtx(t)))
	assert.Equal(t, 1, fx.src.DocumentRequests(), "a conditional GET answered 304")
	require.NoError(t, fx.src.Create("f", "F", xml))
	require.NoError(t, fx.src.Delete("c"))
	require.NoError(t, fl.Poll(testCtx(t)))
	assert.Equal(t, fx.src.Pool(), tree(t, fl.Catalog()))

	_, err = feed.Restore([]byte("not a snapshot"))
	assert.Error(t, err)
	other, err := New(fx.src.ArchiveURL(1), Options{Client: client, Logger: quiet})
	require.NoError(t, err)
	_, err = other.Restore(data)
	assert.ErrorContains(t, err, "not "+fx.src.ArchiveURL(1))
}
