package atomfeed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/atomsource"
)

func TestInspect(t *testing.T) {
	fx := start(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d"} {
		require.NoError(t, fx.src.Create(n, "Record "+n, xml, txt))
	}
	require.NoError(t, fx.src.Update("a", "A", txt2)) // one historical entry
	require.NoError(t, fx.src.Delete("b"))            // one deletion entry, one historical
	rep, err := fx.feed.Inspect(testCtx(t))
	require.NoError(t, err)
	require.Len(t, rep.Documents, fx.src.Documents())
	assert.Equal(t, fx.src.URL(), rep.Documents[0].URL)
	assert.Equal(t, fx.src.ArchiveURL(1), rep.Documents[len(rep.Documents)-1].URL)
	total := 0
	for _, d := range rep.Documents {
		assert.Empty(t, d.Error)
		total += d.Entries
	}
	assert.Equal(t, 6, total)
	assert.True(t, rep.Whole)
	assert.Equal(t, 3, rep.Records)
	assert.Equal(t, 3, rep.Active)
	assert.Equal(t, 2, rep.Historical)
	assert.Equal(t, 1, rep.Deletion)
	assert.Equal(t, map[string]int{"text/plain": 3, "application/xml": 2}, rep.Representations)
	require.NotNil(t, rep.NewestUpdated)
	assert.Equal(t, *rep.Documents[0].Updated, *rep.NewestUpdated, "the deletion is the newest entry")
}
