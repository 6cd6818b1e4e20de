package atomfeed

import (
	"bytes"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
	"rsfs/tests/atomsource"
)

// TestRepresentationGone410IsNotAFileAndNotRetried: a representation whose
// HEAD answers 410 Gone is not a file, the record keeps its other
// representation, and (unlike a representation that fails with 500) the
// record is not put on the retry list: a poll of an unchanged feed asks
// the 410 URL nothing.
func TestRepresentationGone410IsNotAFileAndNotRetried(t *testing.T) {
	src := atomsource.Start(atomsource.Config{})
	t.Cleanup(src.Close)
	var logs bytes.Buffer // polls are run here, one at a time
	client := fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})
	feed, err := New(src.URL(), Options{Client: client, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	cat := feed.NewCatalog()
	fl := feed.NewFollower(cat, FollowOptions{})

	require.NoError(t, src.Create("a", "A", xml, txt))
	require.NoError(t, src.Create("b", "B", xml)) // the contrast: an error is retried
	src.Fail("/rec/a.xml", http.StatusGone)
	src.Fail("/rec/b.xml", http.StatusInternalServerError)
	ctx := testCtx(t)
	require.NoError(t, fl.Load(ctx), "a gone representation is no error")

	assert.Equal(t, map[string][]string{atomsource.ID("a"): {"text/plain " + src.RepURL("a", "txt")}}, tree(t, cat),
		"a.xml (410) is not a file; record a keeps a.txt; b.xml (500) is not shown yet")
	_, _, ok := lookup(cat, "rec", "a.xml")
	assert.False(t, ok, "the 410 representation is absent")
	_, _, ok = lookup(cat, "rec", "a.txt")
	assert.True(t, ok, "the record's other representation is present")
	assert.Contains(t, logs.String(), "representation gone (404/410)")
	assert.NotContains(t, logs.String(), "uri="+src.RepURL("a", "xml")+" err=", "410 is not logged as a failure to learn a size")

	for poll := 1; poll <= 2; poll++ {
		src.ResetRequests()
		require.NoError(t, fl.Poll(ctx))
		assert.Equal(t, 1, src.Requests("/feed"), "poll %d: the feed is unchanged (one conditional GET)", poll)
		assert.Equal(t, 0, src.Requests("/rec/a.xml"), "poll %d: the 410 representation is not asked again", poll)
		assert.Equal(t, 0, src.Requests("/rec/a.txt"), "poll %d: record a is not retried", poll)
		assert.Equal(t, 1, src.Requests("/rec/b.xml"), "poll %d: the 500 one is retried at each poll", poll)
	}
	assert.Empty(t, fl.Status().LastPollErr)
	assert.Equal(t, []string{"text/plain " + src.RepURL("a", "txt")}, tree(t, cat)[atomsource.ID("a")])

	src.Fail("/rec/b.xml", 0)
	require.NoError(t, fl.Poll(ctx))
	_, _, ok = lookup(cat, "rec", "b.xml")
	assert.True(t, ok, "the 500 one shows once it answers")
	_, _, ok = lookup(cat, "rec", "a.xml")
	assert.False(t, ok, "the 410 one stays out")
}
