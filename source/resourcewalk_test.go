package source

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree is a walk's documents: each URL's children (an index), or none (a
// list); a URL in fail cannot be read.
type tree struct {
	children map[string][]string
	fail     map[string]bool
}

// walkOf is a indexWalk over tr that records what it read, in order, what
// failed, and how many documents were queued and ended; goOn says whether
// a failure lets the walk go on.
type walkOf struct {
	mu              sync.Mutex
	read, failed    []string
	queued, ended   int
	most            int32
	w               indexWalk
	deepestReadSeen int
}

func newWalkOf(tr tree, parallel int, goOn bool) *walkOf {
	o := &walkOf{}
	var now atomic.Int32
	o.w = indexWalk{
		kind:     "resource list",
		parallel: parallel,
		read: func(ctx context.Context, d walkDoc) ([]string, error) {
			n := now.Add(1)
			defer now.Add(-1)
			o.mu.Lock()
			o.read = append(o.read, d.url)
			o.most = max(o.most, n)
			o.deepestReadSeen = max(o.deepestReadSeen, d.depth)
			o.mu.Unlock()
			if parallel > 1 {
				time.Sleep(time.Millisecond) // let the other readers overlap
			}
			if tr.fail[d.url] {
				return tr.children[d.url], fmt.Errorf("%s: 500", d.url)
			}
			return tr.children[d.url], nil
		},
		failed: func(_ context.Context, d walkDoc, err error) bool {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.failed = append(o.failed, d.url+": "+err.Error())
			return goOn
		},
		queued: func(walkDoc) { o.queued++ }, // under the walk's lock
		ended: func(walkDoc) {
			o.mu.Lock()
			o.ended++
			o.mu.Unlock()
		},
	}
	return o
}

func (o *walkOf) run(t *testing.T, seeds ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var docs []walkDoc
	for _, u := range seeds {
		docs = append(docs, walkDoc{url: u})
	}
	return o.w.run(ctx, docs)
}

// One at a time, the walk reads breadth-first in the order the documents
// are named, each URL once however often it is named (a cycle included).
func TestIndexWalkReadsInOrderEachOnce(t *testing.T) {
	tr := tree{children: map[string][]string{
		"a":  {"a1", "a2", "b"},
		"a1": {"a11", "a1"}, // names itself
		"b":  {"a2", "b1"},
	}}
	o := newWalkOf(tr, 1, true)
	require.NoError(t, o.run(t, "a", "b"))
	assert.Equal(t, []string{"a", "b", "a1", "a2", "b1", "a11"}, o.read)
	assert.Empty(t, o.failed)
	assert.Equal(t, 6, o.queued)
	assert.Equal(t, 6, o.ended)
}

// A chain of indexes is read to MaxDepth under the seed; the document one
// deeper is a failure of its own, never read, and the other seed's
// documents are read.
func TestIndexWalkStopsAtMaxDepth(t *testing.T) {
	tr := tree{children: map[string][]string{}}
	for i := 0; i <= MaxDepth+2; i++ {
		tr.children[fmt.Sprintf("i%d", i)] = []string{fmt.Sprintf("i%d", i+1)}
	}
	o := newWalkOf(tr, 1, true)
	require.NoError(t, o.run(t, "i0", "other"))
	assert.Equal(t, MaxDepth, o.deepestReadSeen)
	assert.Equal(t, []string{"i0", "other", "i1", "i2", "i3"}, o.read)
	require.Len(t, o.failed, 1)
	assert.Equal(t, fmt.Sprintf("i%d: resource list i%d: indexes nested too deep (more than 3 levels)", MaxDepth+1, MaxDepth+1), o.failed[0])
	assert.Equal(t, o.queued, o.ended, "every document queued is ended, the one too deep too")
}

// A document that fails is the failure of its own: an index's children
// read before the failure are walked, and so are its siblings. A failure
// the walk cannot go on without stops it with that error, and nothing
// queued after is read.
func TestIndexWalkFailures(t *testing.T) {
	tr := tree{
		children: map[string][]string{"idx": {"bad", "ok1"}, "bad": {"partial"}},
		fail:     map[string]bool{"bad": true},
	}
	o := newWalkOf(tr, 1, true)
	require.NoError(t, o.run(t, "idx", "s2"))
	assert.Equal(t, []string{"idx", "s2", "bad", "ok1", "partial"}, o.read)
	assert.Equal(t, []string{"bad: bad: 500"}, o.failed)

	o = newWalkOf(tr, 1, false)
	err := o.run(t, "idx", "s2")
	require.Error(t, err)
	assert.Equal(t, "bad: 500", err.Error())
	assert.Equal(t, []string{"idx", "s2", "bad"}, o.read, "nothing read once the walk stopped")
	assert.Equal(t, 3, o.ended, "the documents read are ended; those left queued are not read")
}

// Parallel readers read every document once, no more at once than asked,
// and the walk ends when the last index's children are read; a cancelled
// context ends it with the context's error.
func TestIndexWalkParallel(t *testing.T) {
	tr := tree{children: map[string][]string{}}
	var all []string
	for i := 0; i < 10; i++ {
		idx := fmt.Sprintf("idx%d", i)
		all = append(all, idx)
		for j := 0; j < 10; j++ {
			c := fmt.Sprintf("%s/l%d", idx, j)
			tr.children[idx] = append(tr.children[idx], c, "shared")
			all = append(all, c)
		}
	}
	all = append(all, "shared")
	var seeds []string
	for i := 0; i < 10; i++ {
		seeds = append(seeds, fmt.Sprintf("idx%d", i))
	}
	o := newWalkOf(tr, 4, true)
	require.NoError(t, o.run(t, seeds...))
	assert.ElementsMatch(t, all, o.read, "each document once")
	assert.LessOrEqual(t, o.most, int32(4), "no more readers than asked")
	assert.Equal(t, len(all), o.queued)
	assert.Equal(t, len(all), o.ended)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o = newWalkOf(tr, 4, true)
	err := o.w.run(ctx, []walkDoc{{url: "idx0"}})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, o.read)
}

// A Resource List Index that names a list twice, beside a second index
// that names it too: a load and inspect each ask for every document once,
// and inspect counts the list's resources once, as the load loads them.
func TestListsNamedTwiceAreReadOnce(t *testing.T) {
	list := `<urlset ` + nsXML + `><rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>
<url><loc>{base}/a.txt</loc><rs:md length="1"/></url><url><loc>{base}/b.txt</loc><rs:md length="1"/></url></urlset>`
	index := `<sitemapindex ` + nsXML + `><rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>
<sitemap><loc>{base}/rl.xml</loc></sitemap><sitemap><loc>{base}/rl.xml</loc></sitemap></sitemapindex>`
	docs := map[string]string{
		"/caps.xml": `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>{base}/rli1.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/rli2.xml</loc><rs:md capability="resourcelist"/></url></urlset>`,
		"/rli1.xml": index, "/rli2.xml": index, "/rl.xml": list,
	}
	base, counts := countedSite(t, docs, nil)

	_, cat, _, err := load(t, base+"/caps.xml")
	require.NoError(t, err)
	assert.Equal(t, 2, cat.Len())
	got := counts()
	assert.Equal(t, map[string]int{"/rli1.xml": 1, "/rli2.xml": 1, "/rl.xml": 1}, map[string]int{
		"/rli1.xml": got["/rli1.xml"], "/rli2.xml": got["/rli2.xml"], "/rl.xml": got["/rl.xml"]}, "a load's GETs")

	s, err := discover(t, base+"/caps.xml")
	require.NoError(t, err)
	counts()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := s.Inspect(ctx)
	require.NoError(t, err)
	got = counts()
	assert.Equal(t, map[string]int{"/rli1.xml": 1, "/rli2.xml": 1, "/rl.xml": 1}, got, "inspect's GETs")
	require.Len(t, rep.Sets, 1)
	assert.Equal(t, int64(2), rep.Sets[0].Resources, "inspect counts what a load loads")
	require.Len(t, rep.Sets[0].Documents, 2)
	for i, d := range rep.Sets[0].Documents {
		assert.True(t, d.Index)
		assert.Equal(t, 2, d.Documents, "the index names two")
		assert.Empty(t, d.Failed)
		assert.Equal(t, int64(2-2*i), d.Entries, "%s: the list's entries, under the index that named it first", d.URL)
	}
}

// resourceDumpSite is a Source whose Capability List names a Resource List
// of a.txt and a Resource Dump Index whose chain of indexes is nested
// levels deep above a Resource Dump of one package (n.txt); the first
// index also names a dump that is gone, and names the next index twice.
// gets counts the GETs of each path.
func resourceDumpSite(t *testing.T, levels int) (string, func() map[string]int) {
	t.Helper()
	docs := map[string]string{
		"/caps.xml": `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/rdi0.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
		"/rl.xml": resList,
		"/rd.xml": `<urlset ` + nsXML + `><rs:md capability="resourcedump" at="2024-01-05T00:00:00Z"/>
<url><loc>{base}/p.zip</loc><rs:md type="application/zip"/></url></urlset>`,
	}
	for i := 0; i < levels; i++ {
		next := fmt.Sprintf("{base}/rdi%d.xml", i+1)
		if i == levels-1 {
			next = "{base}/rd.xml"
		}
		child := `<sitemap><loc>` + next + `</loc><rs:md capability="resourcedump"/></sitemap>`
		if i == 0 {
			child = `<sitemap><loc>{base}/gone.xml</loc></sitemap>` + child + child
		}
		docs[fmt.Sprintf("/rdi%d.xml", i)] = `<sitemapindex ` + nsXML + `><rs:md capability="resourcedump" at="2024-01-05T00:00:00Z"/>` +
			child + `</sitemapindex>`
	}
	manifest := `<urlset ` + nsXML + `><rs:md capability="resourcedump-manifest" at="2024-01-05T00:00:00Z"/>
<url><loc>BASE/n.txt</loc><lastmod>2024-01-05T00:00:00Z</lastmod><rs:md length="4" path="/res/n.txt"/></url></urlset>`
	zips := map[string][]byte{}
	base, gets := countedSite(t, docs, zips)
	zips["/p.zip"] = zipOf(t, map[string]string{"manifest.xml": strings.ReplaceAll(manifest, "BASE", base), "res/n.txt": "nnnn"})
	return base, gets
}

// A load and inspect walk a Resource Dump Index by the one walk of
// indexes: nested up to MaxDepth under the one the Capability List names,
// each document asked for once (the index names its child twice), a child
// that cannot be read a failure of its own (named, under the index) while
// its siblings are read, and a document nested deeper not read.
func TestResourceDumpIndexesByTheOneRule(t *testing.T) {
	for _, tc := range []struct {
		levels   int
		loaded   bool
		failures []string
	}{
		{levels: 1, loaded: true, failures: []string{"gone.xml"}},
		{levels: 3, loaded: true, failures: []string{"gone.xml"}},
		{levels: 4, loaded: false, failures: []string{"gone.xml", "rd.xml: indexes nested too deep"}},
	} {
		t.Run(fmt.Sprintf("depth %d", tc.levels), func(t *testing.T) {
			base, gets := resourceDumpSite(t, tc.levels)
			s, cat, _, err := load(t, base+"/caps.xml")
			require.NoError(t, err)
			_, ok := cat.ByURI(base + "/n.txt")
			assert.Equal(t, tc.loaded, ok, "the Resource Dump's resource, beside a sibling that is gone")
			_, ok = cat.ByURI(base + "/a.txt")
			assert.True(t, ok, "the Resource List's")
			indexUnreadFor(t, s, base+"/rdi0.xml", tc.failures)
			for path, n := range gets() {
				assert.Equal(t, 1, n, "a load's GETs of %s", path)
			}

			s, err = discover(t, base+"/caps.xml")
			require.NoError(t, err)
			gets()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rep, err := s.Inspect(ctx)
			require.NoError(t, err)
			for path, n := range gets() {
				assert.Equal(t, 1, n, "inspect's GETs of %s", path)
			}
			var dump *DocReport
			for i := range rep.Sets[0].Documents {
				if rep.Sets[0].Documents[i].Capability == "resourcedump" {
					dump = &rep.Sets[0].Documents[i]
				}
			}
			require.NotNil(t, dump)
			assert.Len(t, dump.Failed, len(tc.failures), "inspect names each failure: %v", dump.Failed)
			want := 0
			if tc.loaded {
				want = 1
			}
			assert.Len(t, rep.Sets[0].Packages, want, "the package, once")
		})
	}
}

// A Resource Dump that cannot be read is the dump's own failure: inspect
// says it as the document's error, with no child failed, and a load names
// it unread.
func TestResourceDumpThatCannotBeRead(t *testing.T) {
	base := walkSite(t, map[string]string{
		"/caps.xml": `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/gone.xml</loc><rs:md capability="resourcedump"/></url></urlset>`,
		"/rl.xml": resList,
	}, nil)
	s, _, _, err := load(t, base+"/caps.xml")
	require.NoError(t, err)
	assert.Contains(t, s.UnreadDumps(s.Sets()[0]), base+"/gone.xml")

	s, err = discover(t, base+"/caps.xml")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := s.Inspect(ctx)
	require.NoError(t, err)
	for _, d := range rep.Sets[0].Documents {
		if d.Capability == "resourcedump" {
			assert.Contains(t, d.Error, "404")
			assert.Empty(t, d.Failed, "the dump's own failure, not a child's")
			return
		}
	}
	t.Fatal("no report of the Resource Dump")
}
