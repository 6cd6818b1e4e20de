package source

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
	"rsfs/resourcesync"
)

// Hand-written documents, after the examples of ResourceSync 1.1 (§8,
// §9, §10 and §6.3): {base} is the test server's URL.
const (
	sdIndex = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <sitemap><loc>{base}/sd1.xml</loc><rs:md capability="description"/></sitemap>
  <sitemap><loc>{base}/sd2.xml</loc><rs:md capability="description"/></sitemap>
</sitemapindex>`
	sd1 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>{base}/set1/caps.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`
	sd2 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>{base}/set2/caps.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`
	// sdBoth names both sets, as a Source with one Source Description does.
	sdBoth = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>{base}/set1/caps.xml</loc><rs:md capability="capabilitylist"/></url>
  <url><loc>{base}/set2/caps.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`
	caps1 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/set1/rli.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/set1/cl.xml</loc><rs:md capability="changelistindex"/></url>
</urlset>`
	caps2 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/set2/rl.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/set2/cl.xml</loc><rs:md capability="changelist"/></url>
</urlset>`
	rli1 = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/set1/caps.xml"/>
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <sitemap><loc>{base}/set1/rl-part1.xml</loc></sitemap>
</sitemapindex>`
	rlPart1 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/set1/caps.xml"/>
  <rs:ln rel="index" href="{base}/set1/rli.xml"/>
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <url><loc>{base}/set1/a.txt</loc><rs:md length="1"/></url>
</urlset>`
	rl2 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/set2/caps.xml"/>
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <url><loc>{base}/set2/b.txt</loc><rs:md length="1"/></url>
</urlset>`
	cl2 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/set2/caps.xml"/>
  <rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
</urlset>`
)

// twoSets is a Source with two resource sets under one Source Description.
func twoSets() map[string]page {
	return map[string]page{
		"/.well-known/resourcesync": {body: sdBoth},
		"/set1/caps.xml":            {body: caps1},
		"/set2/caps.xml":            {body: caps2},
		"/set1/rli.xml":             {body: rli1},
		"/set1/rl-part1.xml":        {body: rlPart1},
		"/set2/rl.xml":              {body: rl2},
		"/set2/cl.xml":              {body: cl2},
	}
}

func setURLs(s *Source) []string {
	var out []string
	for _, set := range s.Sets() {
		out = append(out, set.URL)
	}
	return out
}

func TestDiscoverSourceDescriptionIndex(t *testing.T) {
	pages := twoSets()
	pages["/.well-known/resourcesync"] = page{body: sdIndex}
	pages["/sd1.xml"] = page{body: sd1}
	pages["/sd2.xml"] = page{body: sd2}
	base := site(t, pages)
	s, err := discover(t, base)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "set1/caps.xml", base + "set2/caps.xml"}, setURLs(s))
	assert.Equal(t, []string{base + "set1/rli.xml"}, s.Sets()[0].Docs[resourcesync.CapResourceList])
	assert.Equal(t, []string{base + "set2/rl.xml"}, s.Sets()[1].Docs[resourcesync.CapResourceList])
	assert.Empty(t, s.Failed)
}

// Given any document of a Source, discovery climbs its up (and index)
// links to the Source Description and reads every set, as from the
// well-known URI.
func TestDiscoverClimbsFromAnyDocument(t *testing.T) {
	base := site(t, twoSets())
	for _, start := range []string{"set2/rl.xml", "set2/cl.xml", "set1/rl-part1.xml", "set1/rli.xml", "set1/caps.xml"} {
		t.Run(start, func(t *testing.T) {
			s, err := discover(t, base+start)
			require.NoError(t, err)
			assert.Equal(t, base+start, s.Entry)
			assert.Equal(t, []string{base + "set1/caps.xml", base + "set2/caps.xml"}, setURLs(s))
			assert.Equal(t, []string{base + "set1/cl.xml"}, s.Sets()[0].Docs[resourcesync.CapChangeList], "changelistindex read as changelist")
			assert.Equal(t, []string{base + "set2/cl.xml"}, s.Sets()[1].Docs[resourcesync.CapChangeList])
			assert.Empty(t, s.Failed)
		})
	}
}

func TestDiscoverNonStandardCapabilityWarnsOnce(t *testing.T) {
	base := site(t, twoSets())
	s, err := discover(t, base)
	require.NoError(t, err)
	var named []Problem
	for _, w := range s.Warnings {
		if strings.Contains(w.Msg, "changelistindex") {
			named = append(named, w)
		}
	}
	require.Len(t, named, 1, "%v", s.Warnings)
	assert.Equal(t, base+"set1/caps.xml", named[0].URL)
}

func TestDiscoverRobotsClimbs(t *testing.T) {
	pages := twoSets()
	delete(pages, "/.well-known/resourcesync")
	pages["/robots.txt"] = page{body: "User-agent: *\nSitemap: {base}/sitemap.xml\nSitemap: {base}/set2/rl.xml\n"}
	pages["/sitemap.xml"] = page{body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{base}/about.html</loc></url></urlset>`}
	base := site(t, pages)
	s, err := discover(t, base)
	require.NoError(t, err)
	assert.Equal(t, base+"robots.txt", s.Entry)
	// The Source Description (up from set2's Capability List) is missing: the
	// climb stops at the Capability List, which is still followed.
	assert.Equal(t, []string{base + "set2/caps.xml"}, setURLs(s))
	assert.Equal(t, []string{base + "set2/cl.xml"}, s.Sets()[0].Docs[resourcesync.CapChangeList])
	require.Len(t, s.Failed, 1)
	assert.Equal(t, base+".well-known/resourcesync", s.Failed[0].URL)
	assert.Contains(t, s.Failed[0].Msg, "404")
	var skipped bool
	for _, w := range s.Warnings {
		skipped = skipped || (w.URL == base+"sitemap.xml" && strings.Contains(w.Msg, "skipped"))
	}
	assert.True(t, skipped, "the plain sitemap is skipped with a warning: %v", s.Warnings)
}

func TestDiscoverRelTokenLists(t *testing.T) {
	base := site(t, map[string]page{
		"/page.html": {ctype: "text/html",
			body: `<html><head><link rel='alternate' href='/x'><link href="/caps.xml" rel="describedby ResourceSync"></head></html>`},
		"/res.pdf":  {headers: map[string]string{"Link": `</x>; rel="alternate", <{base}/caps.xml>; rel="describedby resourcesync"`}, body: "%PDF"},
		"/caps.xml": {body: capList},
	})
	for _, start := range []string{"page.html", "res.pdf"} {
		t.Run(start, func(t *testing.T) {
			s, err := discover(t, base+start)
			require.NoError(t, err)
			assert.Equal(t, []string{base + "caps.xml"}, setURLs(s))
		})
	}
}

func TestDiscoverChainsAreBounded(t *testing.T) {
	loopRL := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/caps.xml"/><rs:md capability="resourcelist"/></urlset>`
	loopCaps := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/rl.xml"/><rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`
	selfIndex := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/><sitemap><loc>{base}/.well-known/resourcesync</loc></sitemap></sitemapindex>`
	pages := map[string]page{
		"/rl.xml":                   {body: loopRL},
		"/caps.xml":                 {body: loopCaps},
		"/.well-known/resourcesync": {body: selfIndex},
	}
	// A chain of 12 lists, each up to the next.
	for i := 0; i < 12; i++ {
		pages["/chain"+itoa(i)+".xml"] = page{body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/chain` + itoa(i+1) + `.xml"/><rs:md capability="resourcelist"/></urlset>`}
	}
	base := site(t, pages)
	_, err := discover(t, base+"rl.xml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "loop")
	assert.Contains(t, err.Error(), base+"rl.xml")

	_, err = discover(t, base)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "loop")

	_, err = discover(t, base+"chain"+itoa(0)+".xml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 8 up and index links")
}

func TestDiscoverPartialRecordsFailedCapabilityList(t *testing.T) {
	pages := twoSets()
	pages["/set2/caps.xml"] = page{status: 500, body: "boom"}
	base := site(t, pages)

	s, err := discover(t, base)
	require.NoError(t, err, "a mount goes on with the set that reads")
	assert.Equal(t, []string{base + "set1/caps.xml", base + "set2/caps.xml"}, setURLs(s))
	d, unread := s.UnreadCapabilityList(s.Sets()[1])
	require.True(t, unread)
	assert.ErrorContains(t, d.Err, "500")
	assert.Empty(t, s.Failed, "Failed is inspect's")

	opts := testOptions()
	opts.Partial = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err = Discover(ctx, base, opts)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "set1/caps.xml"}, setURLs(s))
	require.Len(t, s.Failed, 1)
	assert.Equal(t, base+"set2/caps.xml", s.Failed[0].URL)
	assert.Contains(t, s.Failed[0].Msg, "500")
}

// The Source's origin is where its documents say they are, not how the
// URL was spelled.
func TestDiscoverOriginFromDocuments(t *testing.T) {
	base := site(t, twoSets())
	localhost := strings.Replace(base, "127.0.0.1", "localhost", 1)
	require.NotEqual(t, base, localhost)
	s, err := discover(t, localhost)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(base, "/"), s.Origin)

	// Documents that name nothing absolute live where they were found.
	rel := site(t, map[string]page{"/.well-known/resourcesync": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/><url><loc>/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`}})
	relLocal := strings.Replace(rel, "127.0.0.1", "localhost", 1)
	s, err = discover(t, relLocal)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(relLocal, "/"), s.Origin)
}

// The Source's origin, where its documents say they are, may be fetched
// from even when no document read is on it: here only a Capability List's
// up link names it, and a resource on it (the root of the tree) is read.
func TestDiscoverAllowsTheSourcesOrigin(t *testing.T) {
	pages := map[string]page{}
	base := site(t, pages)
	local := strings.Replace(base, "127.0.0.1", "localhost", 1)
	require.NotEqual(t, base, local)
	pages["/.well-known/resourcesync"] = page{body: `<urlset ` + nsXML + `><rs:md capability="description"/>
  <url><loc>` + local + `caps.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`}
	pages["/caps.xml"] = page{body: `<urlset ` + nsXML + `><rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/><url><loc>` + local + `rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`}
	pages["/a.txt"] = page{body: "abc"}
	opts := testOptions()
	ctx := context.Background()
	s, err := Discover(ctx, local, opts)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSuffix(base, "/"), s.Origin)
	resp, err := opts.Client.Get(ctx, base+"a.txt", nil)
	require.NoError(t, err, "a resource on the Source's origin")
	resp.Body.Close()
	_, err = opts.Client.Get(ctx, strings.Replace(base, "127.0.0.1", "127.0.0.2", 1)+"a.txt", nil)
	assert.ErrorIs(t, err, fetch.ErrNotAllowed, "an origin the Source does not name")
}

func itoa(i int) string { return string(rune('a'+i/10)) + string(rune('0'+i%10)) }

// Two robots.txt lines that lead to one Source: its sets once, no loop.
func TestDiscoverRobotsLinesSharingASource(t *testing.T) {
	pages := twoSets()
	pages["/robots.txt"] = page{body: "Sitemap: {base}/set2/rl.xml\nSitemap: {base}/set1/rl-part1.xml\nSitemap: {base}/set2/cl.xml\n"}
	pages["/.well-known/resourcesync"] = page{status: 404}
	pages["/sd.xml"] = page{body: sdBoth}
	for _, p := range []string{"/set1/caps.xml", "/set2/caps.xml"} {
		pages[p] = page{body: strings.Replace(pages[p].body, "{base}/.well-known/resourcesync", "{base}/sd.xml", 1)}
	}
	base := site(t, pages)
	s, err := discover(t, base)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "set1/caps.xml", base + "set2/caps.xml"}, setURLs(s))
	assert.Empty(t, s.Failed)
}

// Source Description Indexes that name one Source Description twice, or
// through two indexes, read it once; one that leads back to itself is a
// loop.
func TestDiscoverDescriptionIndexDiamond(t *testing.T) {
	pages := twoSets()
	pages["/.well-known/resourcesync"] = page{body: `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <sitemap><loc>{base}/idx2.xml</loc></sitemap><sitemap><loc>{base}/sd1.xml</loc></sitemap><sitemap><loc>{base}/sd1.xml</loc></sitemap></sitemapindex>`}
	pages["/idx2.xml"] = page{body: `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/><sitemap><loc>{base}/sd1.xml</loc></sitemap><sitemap><loc>{base}/sd2.xml</loc></sitemap></sitemapindex>`}
	pages["/sd1.xml"] = page{body: sd1}
	pages["/sd2.xml"] = page{body: sd2}
	base := site(t, pages)
	s, err := discover(t, base)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "set1/caps.xml", base + "set2/caps.xml"}, setURLs(s))
}
