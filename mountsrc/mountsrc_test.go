package mountsrc

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/changes"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/protocol"
	"rsfs/source"
	"rsfs/statedir"
	"rsfs/status"
	"rsfs/tests/atomsource"
	"rsfs/tests/logbuf"
	"rsfs/tests/sourcetest"
)

func testOptions() source.Options {
	return source.Options{Client: fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})}
}

func startSource(t *testing.T, cfg sourcetest.Config) *sourcetest.Source {
	t.Helper()
	src, err := sourcetest.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(src.Close)
	return src
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func loadT(t *testing.T, dir, url string) *Loaded {
	t.Helper()
	l, err := discoverAndLoad(ctx(t), dir, url, testOptions(), nil)
	require.NoError(t, err)
	return l
}

func follower(l *Loaded) *changes.Follower {
	return changes.New(l.Source, l.Catalog, changes.FollowOptions{}, l.Positions)
}

// size returns the size the catalog shows for uri, or -1 if it has none.
func size(t *testing.T, cat *catalog.Catalog, uri string) int64 {
	t.Helper()
	id, ok := cat.ByURI(uri)
	if !ok {
		return -1
	}
	a, ok := cat.Attr(id)
	require.True(t, ok)
	return a.Size
}

func TestRemembersAndCatchesUp(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 30})
	dir := t.TempDir()

	l := loadT(t, dir, src.URL())
	assert.True(t, l.Fresh())
	assert.True(t, l.NeedsCatchUp, "a fresh catalog catches up from the Resource Lists' time too")
	assert.Equal(t, 30, l.Catalog.Len())
	require.NoError(t, saveSnapshot(dir, l.Catalog, follower(l)))

	res := src.Resources()
	updated, deleted := res[3], res[4]
	require.NoError(t, src.Update(updated.URI, []byte("changed\n")))
	require.NoError(t, src.Delete(deleted.URI))
	src.ResetCounters()

	l = loadT(t, dir, src.URL())
	assert.Zero(t, src.Counters().ListDocs, "no Resource List read")
	assert.False(t, l.Fresh())
	assert.True(t, l.NeedsCatchUp)
	assert.False(t, l.Reload)
	assert.Equal(t, updated.Size, size(t, l.Catalog, updated.URI), "the snapshot's version, before catching up")
	assert.Equal(t, deleted.Size, size(t, l.Catalog, deleted.URI))

	require.NoError(t, l.CatchUp(ctx(t), follower(l)))
	assert.Equal(t, int64(len("changed\n")), size(t, l.Catalog, updated.URI))
	assert.Equal(t, int64(-1), size(t, l.Catalog, deleted.URI))
	assert.Equal(t, 29, l.Catalog.Len())

	src.ResetCounters()
	loadT(t, t.TempDir(), src.URL())
	assert.Equal(t, int64(1), src.Counters().ListDocs, "a fresh load reads the Resource List")
}

func TestSourceDownMountsFromSnapshot(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 12})
	dir := t.TempDir()
	l := loadT(t, dir, src.URL())
	require.NoError(t, saveSnapshot(dir, l.Catalog, follower(l)))
	src.Close()

	l = loadT(t, dir, src.URL())
	assert.False(t, l.Fresh())
	assert.False(t, l.NeedsCatchUp, "nothing to catch up from")
	assert.Equal(t, 12, l.Catalog.Len())
	require.NoError(t, l.CatchUp(ctx(t), follower(l)), "catching up does nothing")

	_, err := discoverAndLoad(ctx(t), t.TempDir(), src.URL(), testOptions(), nil)
	assert.Error(t, err, "no snapshot and no Source")
}

func TestSnapshotNotUsed(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 12})
	other := startSource(t, sourcetest.Config{Resources: 5})

	damaged := t.TempDir()
	require.NoError(t, os.WriteFile(statedir.SnapshotPath(damaged), []byte("not a snapshot"), 0o600))
	l := loadT(t, damaged, src.URL())
	assert.True(t, l.Fresh(), "a damaged snapshot: the Resource Lists are read")
	assert.Equal(t, 12, l.Catalog.Len())

	elsewhere := t.TempDir()
	lo := loadT(t, elsewhere, other.URL())
	require.NoError(t, saveSnapshot(elsewhere, lo.Catalog, follower(lo)))
	l = loadT(t, elsewhere, src.URL())
	assert.True(t, l.Fresh(), "a snapshot of another origin is not used")
	assert.Equal(t, 12, l.Catalog.Len())

	l = loadT(t, "", src.URL())
	assert.True(t, l.Fresh(), "remembering off")
	require.NoError(t, saveSnapshot("", l.Catalog, follower(l)))
}

func TestReloadWhenSetsChanged(t *testing.T) {
	one := startSource(t, sourcetest.Config{Resources: 10})
	dir := t.TempDir()
	l := loadT(t, dir, one.URL())
	require.NoError(t, saveSnapshot(dir, l.Catalog, follower(l)))
	addr := one.URL()[len("http://") : len(one.URL())-1]
	one.Close()

	two := startSource(t, sourcetest.Config{Addr: addr, Resources: 16, ResourceSets: 2})
	require.Equal(t, one.URL(), two.URL())
	l = loadT(t, dir, two.URL())
	assert.True(t, l.Reload)
	assert.Equal(t, 10, l.Catalog.Len(), "the snapshot, before catching up")
	require.NoError(t, l.CatchUp(ctx(t), follower(l)))
	assert.Equal(t, 16, l.Catalog.Len())
}

// The follower's loop saves every SaveEvery, and at unmount: a periodic
// save writes only when changes were applied, the last one always.
func TestPeriodicSaveWritesOnlyWhenChangesWereApplied(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 8})
	dir := t.TempDir()
	r := newResourceSync(loadT(t, dir, src.URL()), dir)
	r.follow(nil, follow.Options{})
	r.save(false)
	_, err := os.Stat(statedir.SnapshotPath(dir))
	assert.ErrorIs(t, err, os.ErrNotExist, "no changes: nothing saved")

	_, err = src.Create("/new.txt", []byte("new\n"))
	require.NoError(t, err)
	require.NoError(t, r.f.Poll(ctx(t)))
	r.save(false)
	l := loadT(t, dir, src.URL())
	assert.False(t, l.Fresh())
	assert.Equal(t, 9, l.Catalog.Len(), "the saved catalog holds the change")

	require.NoError(t, os.Remove(statedir.SnapshotPath(dir)))
	r.save(false)
	_, err = os.Stat(statedir.SnapshotPath(dir))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing new since: nothing saved")
	r.save(true)
	_, err = os.Stat(statedir.SnapshotPath(dir))
	assert.NoError(t, err, "the last save writes whatever changed")
}

// A catalog fresh from the Resource Lists is saved on the follower's loop
// before its first poll, not beside it, and Run returns only once every
// save is done. The test takes production's order (cmd/rsfs: Open,
// Follow, CatchUp, then Run): the first save holds what the catch-up
// applied, not what the loop's first poll applies, and the last one holds
// what the polls applied.
func TestFreshCatalogSavedBeforeTheFirstPoll(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 500})
	dir := t.TempDir()
	var savedAtFirstPoll atomic.Int64 // the snapshot's files: 0 no poll yet, -1 absent
	held := func() bool {
		n := int64(-1)
		if cat, _, err := catalog.LoadSnapshot(statedir.SnapshotPath(dir), catalog.Options{}); err == nil {
			n = int64(cat.Len())
		}
		savedAtFirstPoll.CompareAndSwap(0, n)
		return false
	}
	applied := make(chan struct{}, 1)
	s, err := Open(ctx(t), Options{Dir: dir, URL: src.URL(), Source: testOptions()})
	require.NoError(t, err)
	s.Follow(nil, follow.Options{Interval: time.Millisecond, MinGap: time.Millisecond, Held: held,
		AfterPoll: func() {
			select {
			case applied <- struct{}{}:
			default:
			}
		}})
	_, err = src.Create("/caught-up.txt", []byte("c\n"))
	require.NoError(t, err)
	require.NoError(t, s.CatchUp(ctx(t)))
	require.Equal(t, 501, s.Catalog().Len(), "the catch-up applied the change")
	_, err = os.Stat(statedir.SnapshotPath(dir))
	require.ErrorIs(t, err, os.ErrNotExist, "neither Open nor CatchUp saves")
	_, err = src.Create("/new.txt", []byte("new\n"))
	require.NoError(t, err)

	runCtx, cancel := context.WithCancel(ctx(t))
	ran := make(chan struct{})
	go func() { defer close(ran); s.Run(runCtx) }()
	for s.Catalog().Len() != 502 {
		select {
		case <-applied:
		case <-time.After(10 * time.Second):
			t.Fatal("no poll applied the new resource")
		}
	}
	cancel()
	<-ran
	assert.Equal(t, int64(501), savedAtFirstPoll.Load(),
		"the snapshot was saved before the loop's first poll, with the catch-up's change")
	l := loadT(t, dir, src.URL())
	assert.False(t, l.Fresh())
	assert.Equal(t, 502, l.Catalog.Len(), "the last save, after the polls, is the one on disk")
}

// Open makes no follower: Follow makes it, and the effects of the changes
// it applies, from CatchUp on, reach the function Follow was given.
func TestEffectsReachWhatFollowIsGiven(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 4})
	s, err := Open(ctx(t), Options{URL: src.URL(), Source: testOptions()})
	require.NoError(t, err)
	assert.Nil(t, s.Follower(), "Open makes no follower")
	_, err = src.Create("/before.txt", []byte("b\n"))
	require.NoError(t, err)

	var got []string
	f := s.Follow(func(es []catalog.Effect) {
		for _, e := range es {
			got = append(got, e.Name)
		}
	}, follow.Options{})
	assert.Same(t, f, s.Follower())
	require.NoError(t, s.CatchUp(ctx(t)))
	assert.Equal(t, []string{"before.txt"}, got, "the catch-up's effects")
	_, err = src.Create("/after.txt", []byte("a\n"))
	require.NoError(t, err)
	require.NoError(t, f.Poll(ctx(t)))
	assert.Equal(t, []string{"before.txt", "after.txt"}, got)
}

// A remembered feed is restored by Open, with nothing following it, and
// caught up by CatchUp through the follower Follow made: the effects of
// that poll reach the function Follow was given.
func TestRememberedFeedCatchesUpThroughFollow(t *testing.T) {
	feed := atomsource.Start(atomsource.Config{PerDocument: 2})
	t.Cleanup(feed.Close)
	rep := atomsource.Rep{Type: "application/xml", Ext: "xml", Body: []byte("<r/>\n")}
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, feed.Create(n, "Record "+n, rep))
	}
	dir := t.TempDir()
	_, err := Open(ctx(t), Options{Dir: dir, URL: feed.URL(), Source: testOptions()})
	require.NoError(t, err)
	_, err = os.Stat(statedir.FeedPath(dir))
	require.NoError(t, err, "a fresh harvest is remembered at once")

	require.NoError(t, feed.Create("d", "Record d", rep))
	s, err := Open(ctx(t), Options{Dir: dir, URL: feed.URL(), Source: testOptions()})
	require.NoError(t, err)
	assert.Nil(t, s.Follower(), "Open makes no follower")
	assert.Equal(t, status.Follow{}, s.Status(), "nothing followed yet")
	assert.Equal(t, 3, s.Catalog().Len(), "restored as remembered")

	var got []string
	s.Follow(func(es []catalog.Effect) {
		for _, e := range es {
			got = append(got, e.Name)
		}
	}, follow.Options{})
	require.NoError(t, s.CatchUp(ctx(t)))
	assert.Equal(t, 4, s.Catalog().Len())
	assert.Equal(t, []string{"d.xml"}, got, "the catch-up's effects")
	assert.Equal(t, int64(1), s.Status().Applied)
}

// A remembered feed whose host is down is restored from its state, as a
// remembered feed whose poll fails: Open mounts the catalog it showed, and
// CatchUp warns that the feed cannot be read, with no error.
func TestRememberedFeedMountsWhileTheFeedIsDown(t *testing.T) {
	feed := atomsource.Start(atomsource.Config{PerDocument: 2})
	t.Cleanup(feed.Close)
	rep := atomsource.Rep{Type: "application/xml", Ext: "xml", Body: []byte("<r/>\n")}
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, feed.Create(n, "Record "+n, rep))
	}
	dir := t.TempDir()
	s, err := Open(ctx(t), Options{Dir: dir, URL: feed.URL(), Source: testOptions()})
	require.NoError(t, err)
	want := names(s.Catalog())
	require.Len(t, want, 3)
	feed.Close() // the feed's host is gone

	var log logbuf.Buffer
	prev := slog.Default()
	slog.SetDefault(log.Logger())
	t.Cleanup(func() { slog.SetDefault(prev) })
	s, err = Open(ctx(t), Options{Dir: dir, URL: feed.URL(), Source: testOptions()})
	require.NoError(t, err, "the remembered feed is mounted")
	assert.Equal(t, protocol.AtomPMH, s.Protocol())
	assert.Equal(t, want, names(s.Catalog()), "the catalog the feed showed")
	s.Follow(nil, follow.Options{})
	require.NoError(t, s.CatchUp(ctx(t)))
	assert.Contains(t, log.String(), "the feed cannot be read; mounting what was remembered")
	assert.Equal(t, want, names(s.Catalog()))

	_, err = Open(ctx(t), Options{Dir: t.TempDir(), URL: feed.URL(), Source: testOptions()})
	assert.Error(t, err, "no state and no feed")
}

// names returns the path of every file in the catalog, sorted.
func names(cat *catalog.Catalog) []string {
	var ns []string
	for _, uri := range cat.URIs() {
		id, _ := cat.ByURI(uri)
		ns = append(ns, cat.Path(id))
	}
	slices.Sort(ns)
	return ns
}

// A state directory holding both a feed's state and a ResourceSync
// snapshot, of a URL that served both protocols, mounts the one saved
// last when the URL cannot be reached.
func TestUnreachableURLMountsTheStateSavedLast(t *testing.T) {
	feed := atomsource.Start(atomsource.Config{PerDocument: 2})
	t.Cleanup(feed.Close)
	require.NoError(t, feed.Create("a", "Record a", atomsource.Rep{Type: "application/xml", Ext: "xml", Body: []byte("<r/>\n")}))
	src := startSource(t, sourcetest.Config{Resources: 5})
	dir := t.TempDir()
	_, err := Open(ctx(t), Options{Dir: dir, URL: feed.URL(), Source: testOptions()})
	require.NoError(t, err)
	l := loadT(t, dir, src.URL())
	require.NoError(t, saveSnapshot(dir, l.Catalog, follower(l)))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(statedir.FeedPath(dir), old, old))
	feed.Close()
	src.Close()

	s, err := Open(ctx(t), Options{Dir: dir, URL: feed.URL(), Source: testOptions()})
	require.NoError(t, err)
	assert.Equal(t, protocol.ResourceSync, s.Protocol(), "the snapshot, saved last")
	assert.Equal(t, 5, s.Catalog().Len())

	require.NoError(t, os.Chtimes(statedir.FeedPath(dir), time.Now().Add(time.Hour), time.Now().Add(time.Hour)))
	s, err = Open(ctx(t), Options{Dir: dir, URL: feed.URL(), Source: testOptions()})
	require.NoError(t, err)
	assert.Equal(t, protocol.AtomPMH, s.Protocol(), "the feed's state, saved last")
	assert.Equal(t, 1, s.Catalog().Len())
}
