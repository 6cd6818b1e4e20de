package changes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/source"
)

// The follow plan inspect prints is what a follower does: the documents a
// poll reads once caught up, and the position it stands at.
func TestInspectFollowPlanAgreesWithTheFollower(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	docs := map[string]string{
		"/caps.xml": `<urlset {ns}><rs:md capability="capabilitylist"/>
<url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/cl-old.xml</loc><rs:md capability="changelist"/></url>
<url><loc>{base}/index.xml</loc><rs:md capability="changelist"/></url>
<url><loc>{base}/cd.xml</loc><rs:md capability="changedump"/></url>
<url><loc>{base}/v10.xml</loc><rs:md capability="changelist"/></url></urlset>`,
		// A 1.0 list (Z39.99-2014): from and until in its header, entries
		// dated by lastmod alone, the last one by nothing (its place).
		"/v10.xml": `<urlset {ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z" until="2024-01-07T00:00:00Z"/>
<url><loc>{base}/f.txt</loc><lastmod>2024-01-06T00:00:00Z</lastmod><rs:md change="created" length="1"/></url>
<url><loc>{base}/g.txt</loc><rs:md change="created" length="1"/></url></urlset>`,
		"/rl.xml": `<urlset {ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>{base}/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`,
		// Closed, but named by the Capability List itself: read at every poll.
		"/cl-old.xml": `<urlset {ns}><rs:md capability="changelist" from="2023-12-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>{base}/b.txt</loc><rs:md change="created" datetime="2024-01-01T12:00:00Z" length="1"/></url></urlset>`,
		"/index.xml": `<sitemapindex {ns}><rs:md capability="changelist" from="2023-11-01T00:00:00Z"/>
<sitemap><loc>{base}/c1.xml</loc><rs:md capability="changelist" from="2023-11-01T00:00:00Z" until="2023-12-01T00:00:00Z"/></sitemap>
<sitemap><loc>{base}/c2.xml</loc><rs:md capability="changelist" from="2023-12-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></sitemap>
<sitemap><loc>{base}/c3.xml</loc><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/></sitemap></sitemapindex>`,
		"/c1.xml": `<urlset {ns}><rs:md capability="changelist" from="2023-11-01T00:00:00Z" until="2023-12-01T00:00:00Z"/></urlset>`,
		"/c2.xml": `<urlset {ns}><rs:md capability="changelist" from="2023-12-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>{base}/c.txt</loc><rs:md change="created" datetime="2024-01-01T18:00:00Z" length="1"/></url></urlset>`,
		// A 1.1 list: the entry with only a lastmod is undated (its
		// lastmod is the resource's time), so the position is 01-05.
		"/c3.xml": `<urlset {ns}><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/>
<url><loc>{base}/d.txt</loc><rs:md change="created" datetime="2024-01-05T00:00:00Z" length="1"/></url>
<url><loc>{base}/e.txt</loc><lastmod>2025-06-01T00:00:00Z</lastmod><rs:md change="created" length="1"/></url></urlset>`,
		"/cd.xml": `<urlset {ns}><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/></urlset>`,
	}
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		body = strings.NewReplacer("{ns}", nsXML, "{base}", base).Replace(body)
		w.Header().Set("ETag", fmt.Sprintf(`"%d"`, len(body)))
		if r.Header.Get("If-None-Match") == w.Header().Get("ETag") {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	base = srv.URL

	opts := testOptions()
	opts.Partial = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	is, err := discoverSource(ctx, base+"/caps.xml", opts)
	require.NoError(t, err)
	rep, err := Inspect(ctx, is)
	require.NoError(t, err)
	require.Len(t, rep.Sets, 1)
	plan := rep.Sets[0].Follow

	s, cat, _, err := load(t, base+"/caps.xml")
	require.NoError(t, err)
	f := New(s, cat, FollowOptions{}, nil)
	pollOnce(t, f) // catches up
	mu.Lock()
	clear(hits)
	mu.Unlock()
	pollOnce(t, f) // what every poll now reads
	var polled []string
	mu.Lock()
	for p := range hits {
		if p != "/caps.xml" { // the structure, re-read at each poll
			polled = append(polled, base+p)
		}
	}
	mu.Unlock()

	assert.ElementsMatch(t, polled, plan.Polled, "inspect's polled documents are the follower's")
	assert.ElementsMatch(t, []string{base + "/cl-old.xml", base + "/index.xml", base + "/c3.xml", base + "/cd.xml", base + "/v10.xml"}, plan.Polled)
	require.NotNil(t, plan.Position)
	assert.Equal(t, onlyPosition(f).Time.UTC(), plan.Position.UTC(), "inspect's position is the follower's")
	assert.Equal(t, "2024-01-06T00:00:00Z", plan.Position.UTC().Format(time.RFC3339), "the 1.0 list's lastmod")
}

// Inspect's follow plan says what would keep following a set from being
// exact, per document: one that cannot be read (the position holds at the
// Resource Lists' time then), one that starts after that time, entries it
// does not date, changes dated in the future; and a set without change
// documents is not followed.
func TestInspectPlanSaysWhatKeepsFollowingInexact(t *testing.T) {
	plan := func(t *testing.T, docs map[string]string, failing string) (string, planView) {
		s := startDocSource(t, docs)
		if failing != "" {
			s.fail(failing, http.StatusInternalServerError)
		}
		opts := testOptions()
		opts.Partial = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		src, err := discoverSource(ctx, s.base+"/caps.xml", opts)
		require.NoError(t, err)
		rep, err := Inspect(ctx, src)
		require.NoError(t, err)
		require.Len(t, rep.Sets, 1)
		v := planView{Polled: rep.Sets[0].Follow.Polled, Warnings: rep.Sets[0].Follow.Warnings}
		if p := rep.Sets[0].Follow.Position; p != nil {
			v.Position = p.UTC().Format(time.RFC3339)
		}
		return s.base, v
	}

	t.Run("a list that cannot be read", func(t *testing.T) {
		base, v := plan(t, map[string]string{"/caps.xml": capList("/cl.xml", "/cl2.xml"), "/rl.xml": resList,
			"/cl2.xml": changeList("2024-01-01T00:00:00Z", "", entry("b.txt", "created", "", "2024-01-04T00:00:00Z", 1))}, "/cl.xml")
		assert.Equal(t, []string{base + "/cl.xml", base + "/cl2.xml"}, v.Polled)
		require.Len(t, v.Warnings, 1)
		assert.Contains(t, v.Warnings[0], base+"/cl.xml could not be read (")
		assert.Contains(t, v.Warnings[0], "500")
		assert.Equal(t, "2024-01-01T00:00:00Z", v.Position, "the Resource List's at: the follower's position holds")
	})
	t.Run("late, undated and future", func(t *testing.T) {
		base, v := plan(t, map[string]string{"/caps.xml": capList("/cl.xml"), "/rl.xml": resList,
			"/cl.xml": changeList("2024-01-03T00:00:00Z", "",
				entry("b.txt", "updated", "", "2024-01-04T00:00:00Z", 2),
				entry("c.txt", "created", "", "", 1),
				entry("d.txt", "created", "", "9999-12-31T00:00:00Z", 1))}, "")
		assert.Equal(t, []string{base + "/cl.xml"}, v.Polled)
		assert.Equal(t, "2024-01-04T00:00:00Z", v.Position, "the newest change not in the future")
		assert.Equal(t, []string{
			base + "/cl.xml starts at 2024-01-03T00:00:00Z, after the Resource Lists' time 2024-01-01T00:00:00Z: changes in between are not listed",
			base + "/cl.xml has 1 entries without datetime: each is ordered by its place in the list",
			base + "/cl.xml has 1 changes dated in the future (the latest 9999-12-31T00:00:00Z)",
		}, v.Warnings)
	})
	t.Run("no change documents", func(t *testing.T) {
		_, v := plan(t, map[string]string{"/caps.xml": capList(), "/rl.xml": resList}, "")
		assert.Empty(t, v.Polled)
		assert.Equal(t, []string{"no Change List: a mount shows this set as listed and does not follow it"}, v.Warnings)
	})
}

// planView is a follow plan as a test compares it.
type planView struct {
	Polled   []string
	Position string
	Warnings []string
}

// Inspect's reports of the change documents are the engine's walk's, read
// once: an index's entries, failures and parser warnings at any depth of
// nesting; a Change List that cannot be read; every package a Change Dump
// names (one closed before the Resource Lists' time too, which the walk
// skips); the changes, dump packages and links they hold.
func TestInspectReportsChangeDocuments(t *testing.T) {
	fx := engineFixture{
		docs: map[string]string{
			"/caps.xml": engineCaps([]string{"/broken.xml", "/top.xml"}, []string{"/cd.xml"}),
			"/rl.xml":   rlAt,
			"/top.xml": `<sitemapindex ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>BASE/mid.xml</loc><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`,
			"/mid.xml": `<sitemapindex ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>BASE/cl1.xml</loc><rs:md capability="changelist" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></sitemap>
<sitemap><loc>BASE/missing.xml</loc><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/></sitemap></sitemapindex>`,
			"/cl1.xml": `<urlset ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>BASE/b.txt</loc><rs:md change="updated" datetime="2024-01-01 10:00:00Z" length="2"/><rs:ln rel="describedby" href="BASE/meta/b.xml"/></url>
<url><loc>BASE/d.txt</loc><rs:md change="created" datetime="2024-01-01T11:00:00Z" length="4"/></url></urlset>`,
			"/cd.xml": `<urlset ` + ns + `><rs:md capability="changedump" from="2023-01-01T00:00:00Z"/>
<url><loc>BASE/p0.zip</loc><rs:md type="application/zip" length="10" from="2023-01-01T00:00:00Z" until="2023-12-01T00:00:00Z"/></url>
<url><loc>BASE/p1.zip</loc><rs:md type="application/zip" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></url></urlset>`,
		},
		packages: map[string]enginePackage{"/p1.zip": {
			manifest: `<urlset ` + ns + `><rs:md capability="changedump-manifest" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>BASE/n.txt</loc><rs:md change="created" datetime="2024-01-01T13:00:00Z" path="/res/n.txt"/><rs:ln rel="describedby" href="BASE/meta/n.xml"/></url></urlset>`,
			members: map[string]string{"res/n.txt": "nnnn"},
		}},
	}
	s := startEngineSource(t, fx)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := testOptions()
	opts.Partial = true
	src, err := discoverSource(ctx, s.base+"/caps.xml", opts)
	require.NoError(t, err)
	s.takeHits()
	rep, err := Inspect(ctx, src)
	require.NoError(t, err)
	_, hits := s.takeHits()
	for _, d := range []string{"/broken.xml", "/top.xml", "/mid.xml", "/cl1.xml", "/missing.xml", "/cd.xml", "/rl.xml"} {
		assert.Equal(t, 1, hits[d], "requests for %s", d)
	}
	require.Len(t, rep.Sets, 1)
	sr := rep.Sets[0]
	var order []string
	docs := map[string]source.DocReport{}
	for _, d := range sr.Documents {
		u := strings.TrimPrefix(d.URL, s.base)
		order = append(order, string(d.Capability)+" "+u)
		docs[u] = d
	}
	assert.Equal(t, []string{"changedump /cd.xml", "changelist /broken.xml", "changelist /top.xml", "resourcelist /rl.xml"}, order)

	assert.Contains(t, docs["/broken.xml"].Error, "404")
	top := docs["/top.xml"]
	assert.True(t, top.Index)
	assert.Equal(t, 1, top.Documents, "the documents the index names")
	assert.Equal(t, int64(2), top.Entries, "the entries of its grandchild")
	require.Len(t, top.Failed, 1)
	assert.Equal(t, s.base+"/missing.xml", top.Failed[0].URL)
	assert.Contains(t, top.Failed[0].Msg, "404")
	require.Len(t, top.Warnings, 1)
	assert.Equal(t, s.base+"/cl1.xml", top.Warnings[0].URL)
	assert.Contains(t, top.Warnings[0].Msg, "space instead of T")
	cd := docs["/cd.xml"]
	assert.Empty(t, cd.Error)
	assert.Equal(t, int64(2), cd.Entries)

	assert.Equal(t, int64(2), sr.Changes)
	assert.Equal(t, int64(2), sr.DumpPackages)
	assert.Equal(t, int64(10), sr.DumpBytes)
	require.Len(t, sr.Packages, 2)
	assert.Equal(t, s.base+"/p0.zip", sr.Packages[0].URL)
	assert.Contains(t, sr.Packages[0].Error, "404", "a package the walk skips is opened for the report")
	p1 := sr.Packages[1]
	assert.Equal(t, s.base+"/p1.zip", p1.URL)
	assert.Empty(t, p1.Error)
	assert.Equal(t, 2, p1.Members)
	assert.Equal(t, 1, p1.ManifestEntries)
	assert.Equal(t, 1, p1.Matched)
	require.Contains(t, sr.Links, "describedby")
	assert.Equal(t, int64(2), sr.Links["describedby"].Count, "a Change List's link and a manifest's")
}

// A failure that is no document walked (a Change Dump's package that
// cannot be read, an index nested too deep) holds the plan's position at
// the Resource Lists' time, and the plan says why.
func TestPlanSaysEveryFailureThatHoldsIt(t *testing.T) {
	w := &walk{failed: map[string]error{
		"http://x/p1.zip":   errors.New("change dump package: fetch http://x/p1.zip: HTTP 404 Not Found"),
		"http://x/deep.xml": errors.New("change list http://x/deep.xml: indexes nested too deep"),
	}}
	got := w.planWarnings(time.Time{})
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "http://x/deep.xml could not be read")
	assert.Contains(t, got[1], "http://x/p1.zip could not be read")
	assert.Contains(t, got[1], "HTTP 404")
}
