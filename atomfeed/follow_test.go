package atomfeed

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/tests/atomsource"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type fixture struct {
	src     *atomsource.Source
	feed    *Feed
	cat     *catalog.Catalog
	fl      *Follower
	effects []catalog.Effect
}

func start(t *testing.T, cfg atomsource.Config) *fixture {
	t.Helper()
	src := atomsource.Start(cfg)
	t.Cleanup(src.Close)
	client := fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})
	feed, err := New(src.URL(), Options{Client: client, Logger: quiet})
	require.NoError(t, err)
	fx := &fixture{src: src, feed: feed, cat: feed.NewCatalog()}
	fx.fl = feed.NewFollower(fx.cat, FollowOptions{Effects: func(e []catalog.Effect) { fx.effects = append(fx.effects, e...) }})
	return fx
}

// tree is the catalog as the producer's Pool writes its pool: per atom:id
// (user.atompmh.id), "TYPE URI" of each file, sorted.
func tree(t *testing.T, cat *catalog.Catalog) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var walk func(catalog.NodeID)
	walk = func(dir catalog.NodeID) {
		kids, _ := cat.Children(dir)
		for _, k := range kids {
			if k.Attr.Dir {
				walk(k.ID)
				continue
			}
			r, ok := cat.Resource(k.ID)
			require.True(t, ok)
			id := ""
			for _, p := range r.Props {
				if p.Name == "id" {
					id = p.Value
				}
			}
			out[id] = append(out[id], r.Type+" "+r.URI)
		}
	}
	walk(catalog.RootID)
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

var (
	xml  = atomsource.Rep{Type: "application/xml", Ext: "xml", Body: []byte("<r/>\n")}
	txt  = atomsource.Rep{Type: "text/plain", Ext: "txt", Body: []byte("plain text\n")}
	txt2 = atomsource.Rep{Type: "text/plain", Ext: "txt", Body: []byte("plain text, longer now\n")}
)

func TestLoadAndFollow(t *testing.T) {
	fx := start(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		require.NoError(t, fx.src.Create(n, "Record "+n, xml, txt))
	}
	require.NoError(t, fx.src.Update("a", "Record a, again", txt2))
	require.NoError(t, fx.src.Delete("b"))
	require.NoError(t, fx.fl.Load(testCtx(t)))
	assert.Equal(t, fx.src.Pool(), tree(t, fx.cat))
	assert.Empty(t, fx.effects, "a load tells the kernel nothing")

	id, _, ok := lookup(fx.cat, "rec", "a.txt")
	require.True(t, ok)
	r, _ := fx.cat.Resource(id)
	assert.Equal(t, int64(len(txt2.Body)), r.Length, "the size learned by HEAD")
	assert.Contains(t, r.Props, catalog.Property{Name: "title", Value: "Record a, again"})
	_, _, ok = lookup(fx.cat, "rec", "a.xml")
	assert.False(t, ok, "a format the update dropped")

	// Changes: a harvest walks the new documents and the one at the mark.
	fx.src.ResetRequests()
	require.NoError(t, fx.src.Create("h", "Record h", xml))
	require.NoError(t, fx.src.Update("c", "Record c", txt2))
	require.NoError(t, fx.src.Delete("d"))
	require.NoError(t, fx.fl.Poll(testCtx(t)))
	assert.Equal(t, fx.src.Pool(), tree(t, fx.cat))
	assert.NotEmpty(t, fx.effects)
	assert.Less(t, fx.src.DocumentRequests(), fx.src.Documents(), "the chain is not walked to its end")

	// Nothing new: one conditional GET, answered 304.
	fx.src.ResetRequests()
	fx.effects = nil
	require.NoError(t, fx.fl.Poll(testCtx(t)))
	assert.Equal(t, 1, fx.src.DocumentRequests())
	assert.Empty(t, fx.effects)
}

func TestCompleteFeedRemovesWhatIsAbsent(t *testing.T) {
	fx := start(t, atomsource.Config{Complete: true})
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, fx.src.Create(n, "Record "+n, xml))
	}
	require.NoError(t, fx.fl.Load(testCtx(t)))
	require.NoError(t, fx.src.Delete("b"))
	require.NoError(t, fx.fl.Poll(testCtx(t)))
	assert.Equal(t, fx.src.Pool(), tree(t, fx.cat))
	_, _, ok := lookup(fx.cat, "rec", "b.xml")
	assert.False(t, ok)
}

// A representation that fails with 500 is not shown and is tried again;
// one answering 404 is not a file, and the record keeps its others.
func TestMissingRepresentations(t *testing.T) {
	fx := start(t, atomsource.Config{})
	require.NoError(t, fx.src.Create("a", "A", xml, txt))
	fx.src.Fail("/rec/a.txt", http.StatusInternalServerError)
	fx.src.Fail("/rec/a.xml", http.StatusNotFound)
	require.NoError(t, fx.fl.Load(testCtx(t)))
	assert.Empty(t, tree(t, fx.cat))
	fx.src.Fail("/rec/a.txt", 0)
	require.NoError(t, fx.fl.Poll(testCtx(t)))
	assert.Equal(t, map[string][]string{atomsource.ID("a"): {"text/plain " + fx.src.RepURL("a", "txt")}}, tree(t, fx.cat),
		"the 500 retried at the next poll although the feed did not change; the 404 stays out")
}

func lookup(cat *catalog.Catalog, path ...string) (catalog.NodeID, catalog.Attr, bool) {
	id := catalog.RootID
	var a catalog.Attr
	for _, name := range path {
		var ok bool
		if id, a, ok = cat.Lookup(id, name); !ok {
			return 0, a, false
		}
	}
	return id, a, true
}

// A tree harvested before anything follows it (Harvest) is followed
// afterwards (Follow): the changes its follower applies reach the Effects
// it was given.
func TestHarvestThenFollow(t *testing.T) {
	fx := start(t, atomsource.Config{PerDocument: 2})
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, fx.src.Create(n, "Record "+n, xml))
	}
	tr, err := fx.feed.Harvest(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, fx.src.Pool(), tree(t, tr.Catalog()))

	var effects []catalog.Effect
	fl := tr.Follow(FollowOptions{Effects: func(e []catalog.Effect) { effects = append(effects, e...) }})
	require.NoError(t, fx.src.Create("d", "Record d", xml, txt))
	require.NoError(t, fx.src.Delete("a"))
	require.NoError(t, fl.Poll(testCtx(t)))
	assert.Equal(t, fx.src.Pool(), tree(t, fl.Catalog()))
	assert.Len(t, effects, 3, "two files added, one removed")
	assert.Equal(t, int64(2), fl.Applied(), "the harvest is no change")
}
