package changes

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
