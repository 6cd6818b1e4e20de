package changes

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/tests/logbuf"
)

// TestFailingUpdateIsPendingAfterTwoPollsAndGivenUpAtTheThird counts the
// polls with literal numbers (DESIGN §7 "Failures": "after three polls it
// is given up"): an update of a.txt that publishes no length, whose HEAD
// always fails, holds the position at polls 1 and 2 and is given up at
// poll 3, with an error naming it; the file then keeps its old length with
// the new version's time and hashes, and the kernel is told its version
// changed (a ContentChanged effect).
func TestFailingUpdateIsPendingAfterTwoPollsAndGivenUpAtTheThird(t *testing.T) {
	cs := &scriptedSource{}
	srv := httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(srv.Close)
	cs.base = srv.URL
	var logs logbuf.Buffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := discoverSource(ctx, srv.URL+"/caps.xml", opts)
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: s.Origin})
	_, err = s.Load(ctx, cat, nil)
	require.NoError(t, err)
	var effMu sync.Mutex
	var effects []catalog.Effect
	f := New(s, cat, FollowOptions{Effects: func(eff []catalog.Effect) {
		effMu.Lock()
		effects = append(effects, eff...)
		effMu.Unlock()
	}}, nil)
	told := func() []catalog.Effect {
		effMu.Lock()
		defer effMu.Unlock()
		return slices.Clone(effects)
	}

	uri := cs.base + "/a.txt"
	id, ok := cat.ByURI(uri)
	require.True(t, ok)
	before, ok := cat.Resource(id)
	require.True(t, ok)
	require.Equal(t, int64(1), before.Length, "listed with length 1")
	require.Empty(t, before.Hashes)

	const newHash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	cs.mu.Lock()
	cs.entries = append(cs.entries, fmt.Sprintf(`<url><loc>%s</loc><rs:md change="updated" datetime="2024-01-02T00:00:00Z" hash="sha-256:%s"/></url>`, uri, newHash))
	cs.mu.Unlock()
	cs.headFail.Store(1 << 20) // its length is never learned

	position := func() string { return onlyPosition(f).Time.UTC().Format(time.RFC3339) }
	pending := func(poll int) {
		t.Helper()
		assert.Equal(t, "2024-01-01T00:00:00Z", position(), "poll %d: the position stays before the failing update", poll)
		assert.NotContains(t, logs.String(), "change given up", "poll %d: not given up yet", poll)
		assert.Contains(t, logs.String(), fmt.Sprintf("attempt=%d", poll), "poll %d: the failure is counted", poll)
		r, ok := cat.Resource(id)
		require.True(t, ok)
		assert.Equal(t, "2024-01-01T00:00:00Z", r.Lastmod.UTC().Format(time.RFC3339), "poll %d: still the listed version", poll)
		assert.Empty(t, r.Hashes, "poll %d: still the listed version", poll)
	}

	pollOnce(t, f) // poll 1
	pending(1)
	pollOnce(t, f) // poll 2
	pending(2)
	require.Empty(t, told(), "polls 1 and 2: nothing changed in the catalog")

	pollOnce(t, f) // poll 3: given up
	assert.Equal(t, "2024-01-02T00:00:00Z", position(), "poll 3: given up, the position moves past it")
	var givenUp string
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, "change given up") {
			givenUp = line
		}
	}
	require.NotEmpty(t, givenUp, "poll 3: given up with an error")
	assert.Contains(t, givenUp, "level=ERROR")
	assert.Contains(t, givenUp, "uri="+uri, "the error names the change")
	assert.Contains(t, givenUp, "attempts=3")
	r, ok := cat.Resource(id)
	require.True(t, ok, "an updated file given up stays in the catalog")
	assert.Equal(t, int64(1), r.Length, "it keeps its old length")
	assert.Equal(t, "2024-01-02T00:00:00Z", r.Lastmod.UTC().Format(time.RFC3339), "with the new version's time")
	assert.Equal(t, []resourcesync.Hash{{Alg: "sha-256", Value: newHash}}, r.Hashes, "and the new version's hashes")
	eff := told()
	require.Len(t, eff, 1, "the kernel is told the given-up file's version changed")
	assert.Equal(t, catalog.ContentChanged, eff[0].Kind)
	assert.Equal(t, id, eff[0].ID)

	pollOnce(t, f) // poll 4: nothing more to try
	assert.Equal(t, 1, strings.Count(logs.String(), "change given up"), "given up once")
	assert.Equal(t, "2024-01-02T00:00:00Z", position())
}
