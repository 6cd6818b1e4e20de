package sourcetest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLayout11Discovery(t *testing.T) {
	src := start(t, Config{Resources: 250, Seed: 7})
	desc := fetchDoc(t, src.URL()+".well-known/resourcesync")
	assert.Equal(t, "urlset", desc.XMLName.Local)
	assert.Equal(t, "description", desc.MD.get("capability"))
	require.Len(t, desc.URLs, 1)
	assert.Equal(t, src.URL()+"capabilitylist.xml", desc.URLs[0].Loc)
	assert.Equal(t, "capabilitylist", desc.URLs[0].MD.get("capability"))

	capl := fetchDoc(t, desc.URLs[0].Loc)
	assert.Equal(t, "capabilitylist", capl.MD.get("capability"))
	assert.Equal(t, src.URL()+".well-known/resourcesync", capl.link("up"))
	assert.Equal(t, []string{src.URL() + "resourcelist.xml", src.URL() + "changelist.xml"}, capl.locs())
	assert.Equal(t, "resourcelist", capl.URLs[0].MD.get("capability"))
	assert.Equal(t, "changelist", capl.URLs[1].MD.get("capability"))

	rl := fetchDoc(t, src.ResourceListURL(0))
	assert.NotEmpty(t, rl.MD.get("at"))
	assert.Equal(t, rl.MD.get("at"), rl.MD.get("completed"))
	assert.Equal(t, src.CapabilityListURL(0), rl.link("up"))
	require.Len(t, rl.URLs, 250)
	assert.Equal(t, src.URL()+"data/d000/r000000.txt", rl.URLs[0].Loc)
	assert.Equal(t, src.URL()+"data/d002/r000249.txt", rl.URLs[249].Loc)
	assert.Equal(t, 250, src.Len())

	cl := fetchDoc(t, src.ChangeListURL(0))
	assert.Equal(t, "changelist", cl.MD.get("capability"))
	assert.Equal(t, rl.MD.get("at"), cl.MD.get("from"))
	assert.Empty(t, cl.URLs)
}

func TestBodiesMatchPublishedHashAndLength(t *testing.T) {
	src := start(t, Config{Resources: 120, Seed: 3, Hashes: []string{"md5", "sha-1", "sha-256"}})
	entries := fetchList(t, src.ResourceListURL(0))
	require.Len(t, entries, 120)
	published := src.Resources()
	require.Len(t, published, 120)
	for i, e := range entries {
		resp, body := get(t, e.Loc)
		require.Equal(t, http.StatusOK, resp.StatusCode, e.Loc)
		size := atoi64(t, e.MD.get("length"))
		assert.EqualValues(t, size, len(body), e.Loc)
		assert.GreaterOrEqual(t, size, int64(DefaultMinSize))
		assert.LessOrEqual(t, size, int64(DefaultMaxSize))
		assert.Equal(t, "text/plain", e.MD.get("type"))
		hashes := toHashes([]string{"md5", "sha-1", "sha-256"},
			bytesDigests([]string{"md5", "sha-1", "sha-256"}, body))
		assert.Equal(t, hashes[0].String()+" "+hashes[1].String()+" "+hashes[2].String(), e.MD.get("hash"))
		assert.Equal(t, published[i].URI, e.Loc)
		assert.Equal(t, published[i].Size, size)
		assert.Equal(t, published[i].Hashes, hashes)
		assert.Equal(t, published[i].Lastmod.UTC().Format(time.RFC3339Nano), e.Lastmod)
		want, ok := src.Body(e.Loc)
		require.True(t, ok)
		assert.Equal(t, want, body)
	}
}

func TestIndexAndGzip(t *testing.T) {
	src := start(t, Config{Resources: 1200, PerList: 500, Gzip: true})
	assert.Equal(t, src.URL()+"resourcelist-index.xml.gz", src.ResourceListURL(0))
	idx := fetchDoc(t, src.ResourceListURL(0))
	assert.Equal(t, "sitemapindex", idx.XMLName.Local)
	assert.Equal(t, "resourcelist", idx.MD.get("capability"))
	require.Equal(t, []string{
		src.URL() + "resourcelist-0000.xml.gz",
		src.URL() + "resourcelist-0001.xml.gz",
		src.URL() + "resourcelist-0002.xml.gz",
	}, idx.locs())
	var counts []int
	seen := map[string]bool{}
	for _, loc := range idx.locs() {
		page := fetchDoc(t, loc)
		assert.Equal(t, src.ResourceListURL(0), page.link("index"))
		counts = append(counts, len(page.URLs))
		for _, u := range page.URLs {
			seen[u.Loc] = true
		}
	}
	assert.Equal(t, []int{500, 500, 200}, counts)
	assert.Len(t, seen, 1200)
	resp, _ := get(t, src.URL()+"resourcelist-0003.xml.gz")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = get(t, src.URL()+"resourcelist.xml.gz")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a set with an index has no single list")
	assert.Equal(t, "capabilitylist", fetchDoc(t, src.CapabilityListURL(0)).MD.get("capability"),
		"the Capability List stays plain XML")
}

func TestLayout10(t *testing.T) {
	src := start(t, Config{Resources: 30, Layout: Layout10})
	capl := fetchDoc(t, src.URL()+".well-known/resourcesync")
	assert.Equal(t, "capabilitylist", capl.MD.get("capability"))
	assert.NotEmpty(t, capl.MD.get("modified"))
	assert.Equal(t, src.URL()+".well-known/resourcesync", src.CapabilityListURL(0))
	assert.Equal(t, []string{src.URL() + "resourcelist.xml", src.URL() + "changelist.xml"}, capl.locs())

	rl := fetchDoc(t, src.ResourceListURL(0))
	assert.Len(t, rl.URLs, 30)
	assert.Equal(t, src.CapabilityListURL(0), rl.link("resourcesync"))
	assert.NotEmpty(t, rl.MD.get("modified"))
	assert.False(t, rl.MD.has("at"))

	uri := rl.URLs[4].Loc
	require.NoError(t, src.Update(uri, []byte("new")))
	cl := fetchDoc(t, src.ChangeListURL(0))
	require.Len(t, cl.URLs, 1)
	assert.Equal(t, uri, cl.URLs[0].Loc)
	assert.Equal(t, "updated", cl.URLs[0].MD.get("change"))
	assert.False(t, cl.URLs[0].MD.has("datetime"), "1.0 carries the change time as lastmod")
	res, ok := src.Lookup(uri)
	require.True(t, ok)
	assert.Equal(t, res.Lastmod.Format(time.RFC3339Nano), cl.URLs[0].Lastmod)
	assert.Equal(t, src.CapabilityListURL(0), cl.link("resourcesync"))
}

func TestLayout10SeveralSets(t *testing.T) {
	src := start(t, Config{Resources: 30, Layout: Layout10, ResourceSets: 2})
	idx := fetchDoc(t, src.URL()+".well-known/resourcesync")
	assert.Equal(t, "sitemapindex", idx.XMLName.Local)
	assert.Equal(t, "capabilitylist", idx.MD.get("capability"))
	assert.Equal(t, []string{src.URL() + "set1/capabilitylist.xml", src.URL() + "set2/capabilitylist.xml"}, idx.locs())
	capl := fetchDoc(t, idx.Sitemaps[1].Loc)
	assert.Equal(t, src.URL()+".well-known/resourcesync", capl.link("up"))
}

func TestResourceSets(t *testing.T) {
	src := start(t, Config{Resources: 100, ResourceSets: 3, Awkward: true})
	desc := fetchDoc(t, src.URL()+".well-known/resourcesync")
	require.Equal(t, []string{
		src.URL() + "set1/capabilitylist.xml", src.URL() + "set2/capabilitylist.xml", src.URL() + "set3/capabilitylist.xml",
	}, desc.locs())
	total := 0
	var sizes []int
	for k, loc := range desc.locs() {
		capl := fetchDoc(t, loc)
		assert.Equal(t, src.ResourceListURL(k), capl.URLs[0].Loc)
		n := len(fetchList(t, capl.URLs[0].Loc))
		sizes = append(sizes, n)
		total += n
	}
	awk := len(src.AwkwardURIs())
	assert.Equal(t, []int{33 + awk, 33, 34}, sizes)
	assert.Equal(t, 100+awk, total)
	assert.Equal(t, total, src.Len())
	resp, _ := get(t, src.URL()+"data/d000/r000050.txt")
	assert.Equal(t, `<`+src.URL()+`set2/capabilitylist.xml>; rel="resourcesync"`, resp.Header.Get("Link"))
}

func TestRange(t *testing.T) {
	src := start(t, Config{Resources: 5, MinSize: 1000, MaxSize: 1000})
	uri := src.URL() + "data/d000/r000002.txt"
	body, ok := src.Body(uri)
	require.True(t, ok)
	require.Len(t, body, 1000)

	cases := []struct {
		rng  string
		want []byte
		cr   string
	}{
		{"bytes=10-19", body[10:20], "bytes 10-19/1000"},
		{"bytes=990-", body[990:], "bytes 990-999/1000"},
		{"bytes=-7", body[993:], "bytes 993-999/1000"},
		{"bytes=995-5000", body[995:], "bytes 995-999/1000"},
	}
	for _, c := range cases {
		resp, got := get(t, uri, "Range", c.rng)
		assert.Equal(t, http.StatusPartialContent, resp.StatusCode, c.rng)
		assert.Equal(t, c.want, got, c.rng)
		assert.Equal(t, c.cr, resp.Header.Get("Content-Range"), c.rng)
	}
	resp, _ := get(t, uri, "Range", "bytes=1000-1010")
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode)
	assert.Equal(t, "bytes */1000", resp.Header.Get("Content-Range"))

	full, _ := get(t, uri)
	etag := full.Header.Get("ETag")
	resp, got := get(t, uri, "Range", "bytes=0-9", "If-Range", etag)
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, body[:10], got)
	resp, got = get(t, uri, "Range", "bytes=0-9", "If-Range", `"stale"`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, body, got)
}

func TestIgnoreRange(t *testing.T) {
	src := start(t, Config{Resources: 2, IgnoreRange: true})
	uri := src.URL() + "data/d000/r000001.txt"
	body, _ := src.Body(uri)
	resp, got := get(t, uri, "Range", "bytes=0-9")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, body, got)
	assert.EqualValues(t, 1, src.Counters().RangeGets)
}

func TestConditionalContent(t *testing.T) {
	src := start(t, Config{Resources: 3})
	uri := src.URL() + "data/d000/r000000.txt"
	resp, _ := get(t, uri)
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	require.True(t, strings.HasPrefix(etag, `"`), "strong ETag: %s", etag)
	res, _ := src.Lookup(uri)
	assert.Equal(t, res.Lastmod.UTC().Format(http.TimeFormat), lm)

	resp, got := get(t, uri, "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	assert.Empty(t, got)
	resp, _ = get(t, uri, "If-Modified-Since", lm)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	assert.EqualValues(t, 2, src.Counters().NotModified)

	require.NoError(t, src.Update(uri, []byte("version two")))
	resp, got = get(t, uri, "If-None-Match", etag)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "version two", string(got))
	assert.NotEqual(t, etag, resp.Header.Get("ETag"))
}

func TestConditionalDocuments(t *testing.T) {
	src := start(t, Config{Resources: 10})
	for _, url := range []string{src.WellKnownURL(), src.CapabilityListURL(0), src.ResourceListURL(0), src.ChangeListURL(0)} {
		resp, _ := get(t, url)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		etag := resp.Header.Get("ETag")
		require.NotEmpty(t, etag, url)
		require.NotEmpty(t, resp.Header.Get("Last-Modified"), url)
		resp, _ = get(t, url, "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, resp.StatusCode, url)
	}
	resp, _ := get(t, src.ChangeListURL(0))
	clTag := resp.Header.Get("ETag")
	resp, _ = get(t, src.ResourceListURL(0))
	rlTag := resp.Header.Get("ETag")
	capResp, _ := get(t, src.CapabilityListURL(0))

	_, err := src.Create("/new/one.txt", []byte("one"))
	require.NoError(t, err)
	resp, body := get(t, src.ChangeListURL(0), "If-None-Match", clTag)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "/new/one.txt")
	resp, _ = get(t, src.ResourceListURL(0), "If-None-Match", rlTag)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get(t, src.CapabilityListURL(0), "If-None-Match", capResp.Header.Get("ETag"))
	assert.Equal(t, http.StatusNotModified, resp.StatusCode, "the Capability List did not change")
}

func TestChanges(t *testing.T) {
	src := start(t, Config{Resources: 20})
	before := time.Now().UTC().Add(-time.Second)
	upd := src.URL() + "data/d000/r000003.txt"
	del := src.URL() + "data/d000/r000007.txt"
	oldBody, _ := src.Body(upd)

	created, err := src.Create("/new/dir/file.txt", []byte("hello created"))
	require.NoError(t, err)
	assert.Equal(t, src.URL()+"new/dir/file.txt", created)
	require.NoError(t, src.Update(upd, nil))
	require.NoError(t, src.Delete(del))
	require.NoError(t, src.Plant(created, []byte("needle in a haystack")))

	_, err = src.Create("/new/dir/file.txt", nil)
	assert.Error(t, err, "creating a live resource")
	assert.Error(t, src.Delete(del), "deleting twice")
	assert.Error(t, src.Update(del, []byte("x")), "updating a deleted resource")
	assert.Error(t, src.Update("http://elsewhere.example/x", nil))

	cl := fetchDoc(t, src.ChangeListURL(0))
	require.Len(t, cl.URLs, 4)
	var kinds, locs []string
	var prev time.Time
	for _, e := range cl.URLs {
		kinds = append(kinds, e.MD.get("change"))
		locs = append(locs, e.Loc)
		dt, err := time.Parse(time.RFC3339Nano, e.MD.get("datetime"))
		require.NoError(t, err)
		assert.True(t, dt.After(before))
		assert.GreaterOrEqual(t, dt.Sub(prev), time.Millisecond, "strictly increasing, 1 ms apart")
		prev = dt
	}
	assert.Equal(t, []string{"created", "updated", "deleted", "updated"}, kinds)
	assert.Equal(t, []string{created, upd, del, created}, locs)
	assert.Empty(t, cl.URLs[2].MD.get("hash"))
	assert.Equal(t, "md5:"+md5hex([]byte("needle in a haystack")), cl.URLs[3].MD.get("hash"))
	assert.Equal(t, "20", cl.URLs[3].MD.get("length"))

	newBody, ok := src.Body(upd)
	require.True(t, ok)
	assert.NotEqual(t, oldBody, newBody, "a nil update generates the next version")
	resp, got := get(t, upd)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, newBody, got)
	assert.Equal(t, cl.URLs[1].MD.get("hash"), "md5:"+md5hex(got))
	resp, _ = get(t, del)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, ok = src.Body(del)
	assert.False(t, ok)
	resp, got = get(t, created)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "needle in a haystack", string(got))

	list := fetchList(t, src.ResourceListURL(0))
	byLoc := map[string]xmlEntry{}
	for _, e := range list {
		byLoc[e.Loc] = e
	}
	assert.Len(t, list, 20)
	assert.Equal(t, 20, src.Len())
	assert.NotContains(t, byLoc, del)
	require.Contains(t, byLoc, created)
	assert.Equal(t, cl.URLs[3].MD.get("datetime"), byLoc[created].Lastmod)
	assert.Equal(t, cl.URLs[1].MD.get("datetime"), byLoc[upd].Lastmod)
	assert.Equal(t, "md5:"+md5hex(newBody), byLoc[upd].MD.get("hash"))

	again, err := src.Create("/data/d000/r000007.txt", []byte("back"))
	require.NoError(t, err)
	assert.Equal(t, del, again)
	_, got = get(t, del)
	assert.Equal(t, "back", string(got))
	assert.Equal(t, 21, src.Len())
}

func TestAwkwardURIs(t *testing.T) {
	src := start(t, Config{Resources: 3, Awkward: true, Mirror: true})
	uris := src.AwkwardURIs()
	require.Len(t, uris, len(awkwardKeys)+1)
	listed := map[string]bool{}
	for _, e := range fetchList(t, src.ResourceListURL(0)) {
		listed[e.Loc] = true
	}
	port := strings.TrimSuffix(strings.TrimPrefix(src.URL(), "http://127.0.0.1:"), "/")
	assert.Contains(t, uris, "http://localhost:"+port+"/awkward/otherhost.txt")
	assert.Contains(t, uris, src.URL()+"awkward/q.cgi?id=1&x=2")
	assert.Contains(t, uris, src.URL()+"awkward/./dots/../dotted.txt")
	bodies := map[string]bool{}
	for _, uri := range uris {
		assert.True(t, listed[uri], uri)
		want, ok := src.Body(uri)
		require.True(t, ok, uri)
		resp, got := get(t, uri)
		require.Equal(t, http.StatusOK, resp.StatusCode, uri)
		assert.Equal(t, want, got, uri)
		assert.Contains(t, string(got), uri)
		bodies[string(got)] = true
	}
	assert.Len(t, bodies, len(uris), "every awkward URI reaches its own resource")
	resp, got := get(t, src.URL()+"awkward/dotted.txt")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a client that resolves dot segments finds it too")
	assert.Contains(t, string(got), "/awkward/./dots/../dotted.txt")
	resp, _ = get(t, src.URL()+"data/./d000/../d000/r000001.txt")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get(t, src.URL()+"awkward/a/b.txt")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%2F is not a slash")
	resp, _ = get(t, src.URL()+"awkward/q.cgi?id=3")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, got = get(t, src.URL()+"awkward/caf%c3%a9.txt")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "lower-case percent hex is equivalent")
	assert.Contains(t, string(got), "caf%C3%A9")
	resp, got = get(t, src.MirrorURL()+"mirror/awkward/q.cgi?id=1&x=2")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(got), "q.cgi?id=1&x=2")
}

func TestMirrorCorruptAndFail(t *testing.T) {
	src := start(t, Config{Resources: 4, Mirror: true})
	require.NotEmpty(t, src.MirrorURL())
	require.NotEqual(t, src.URL(), src.MirrorURL())
	list := fetchList(t, src.ResourceListURL(0))
	require.Len(t, list, 4)
	e := list[1]
	require.Len(t, e.Links, 1)
	assert.Equal(t, "duplicate", e.Links[0].get("rel"))
	assert.Equal(t, "1", e.Links[0].get("pri"))
	mirror := e.Links[0].get("href")
	assert.Equal(t, src.MirrorURL()+"mirror/data/d000/r000001.txt", mirror)
	good, _ := src.Body(e.Loc)
	_, got := get(t, mirror)
	assert.Equal(t, good, got)

	src.Corrupt(e.Loc, []byte("garbage"))
	_, got = get(t, e.Loc)
	assert.Equal(t, "garbage", string(got))
	_, got = get(t, mirror)
	assert.Equal(t, good, got)
	again := fetchList(t, src.ResourceListURL(0))
	assert.Equal(t, e.MD.get("hash"), again[1].MD.get("hash"), "corruption keeps the published hash")
	assert.Equal(t, e.MD.get("length"), again[1].MD.get("length"))
	assert.Empty(t, fetchDoc(t, src.ChangeListURL(0)).URLs, "corruption is not a change")
	src.Corrupt(e.Loc, nil)
	_, got = get(t, e.Loc)
	assert.Equal(t, good, got)

	src.FailPrimary(e.Loc, http.StatusInternalServerError)
	resp, _ := get(t, e.Loc)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	resp, got = get(t, mirror)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, good, got)
	src.FailPrimary(e.Loc, 0)
	resp, _ = get(t, e.Loc)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, 3, src.Counters().Mirror)
	assert.Panics(t, func() { src.Corrupt(src.URL()+"nope", nil) })
}

func TestNoHEADAndOmitLength(t *testing.T) {
	src := start(t, Config{Resources: 5, NoHEAD: true, OmitLength: true})
	for _, e := range fetchList(t, src.ResourceListURL(0)) {
		assert.False(t, e.MD.has("length"), e.Loc)
		assert.True(t, e.MD.has("hash"), e.Loc)
	}
	uri := src.URL() + "data/d000/r000000.txt"
	resp, _ := do(t, http.MethodHead, uri)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, _ = get(t, uri)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestHEAD(t *testing.T) {
	src := start(t, Config{Resources: 5})
	uri := src.URL() + "data/d000/r000004.txt"
	res, _ := src.Lookup(uri)
	resp, body := do(t, http.MethodHead, uri)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, body)
	assert.Equal(t, res.Size, resp.ContentLength)
	assert.EqualValues(t, 1, src.Counters().Heads)
	resp, _ = do(t, http.MethodPut, uri)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestCountersAndDelay(t *testing.T) {
	src := start(t, Config{Resources: 5})
	uri := src.URL() + "data/d000/r000000.txt"
	fetchDoc(t, src.WellKnownURL())
	fetchDoc(t, src.ResourceListURL(0))
	get(t, uri)
	resp, _ := get(t, uri, "Range", "bytes=0-0")
	get(t, uri, "If-None-Match", resp.Header.Get("ETag"))
	do(t, http.MethodHead, uri)
	want := Counters{ListDocs: 1, OtherDocs: 1, WholeGets: 2, RangeGets: 1, Heads: 1, NotModified: 1}
	assert.Equal(t, want, src.Counters())
	assert.Equal(t, int64(3), src.Counters().ContentGets(), "three GETs, each counted once")
	src.ResetCounters()
	assert.Equal(t, Counters{}, src.Counters())

	src.SetDelay(150 * time.Millisecond)
	t0 := time.Now()
	get(t, uri)
	assert.GreaterOrEqual(t, time.Since(t0), 150*time.Millisecond)
	// With content delayed an hour, a document still comes back within the
	// client's 30 s timeout: documents are not delayed.
	src.SetDelay(time.Hour)
	fetchDoc(t, src.ResourceListURL(0))
	src.SetDelay(0)
}

func TestDiscoveryAids(t *testing.T) {
	src := start(t, Config{Resources: 5, ResourceSets: 2})
	_, robots := get(t, src.URL()+"robots.txt")
	assert.Contains(t, string(robots), "Sitemap: "+src.URL()+"set1/resourcelist.xml\n")
	assert.Contains(t, string(robots), "Sitemap: "+src.URL()+"set2/resourcelist.xml\n")
	resp, page := get(t, src.URL()+"index.html")
	assert.Contains(t, string(page), `<link rel="resourcesync" href="`+src.URL()+`set1/capabilitylist.xml"/>`)
	assert.Equal(t, `<`+src.URL()+`set1/capabilitylist.xml>; rel="resourcesync"`, resp.Header.Get("Link"))
	rl := fetchDoc(t, src.URL()+"set2/resourcelist.xml")
	assert.Equal(t, src.URL()+"set2/capabilitylist.xml", rl.link("up"))
	capl := fetchDoc(t, rl.link("up"))
	assert.Equal(t, src.WellKnownURL(), capl.link("up"))
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Resources: -1}, {MinSize: 10, MaxSize: 5}, {Hashes: []string{"crc32"}}, {Layout: 9}, {ResourceSets: -2},
	} {
		_, err := Start(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}
