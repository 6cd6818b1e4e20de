package source

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

func inspect(t *testing.T, url string) *Report {
	t.Helper()
	opts := testOptions()
	opts.Partial = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Discover(ctx, url, opts)
	require.NoError(t, err)
	rep, err := s.Inspect(ctx)
	require.NoError(t, err)
	return rep
}

func docReport(t *testing.T, sr SetReport, c resourcesync.Capability) DocReport {
	t.Helper()
	for _, d := range sr.Documents {
		if d.Capability == c {
			return d
		}
	}
	t.Fatalf("no %s in %+v", c, sr.Documents)
	return DocReport{}
}

// One document failing is reported on its own; the rest is read.
func TestInspectReportsFailuresPerDocument(t *testing.T) {
	pages := twoSets()
	pages["/set1/cl.xml"] = page{status: 500, body: "boom"}
	pages["/set2/cl.xml"] = page{body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="changelist" from="2024-01-03T00:00:00Z"/>
  <url><loc>{base}/set2/b.txt</loc><rs:md change="updated" datetime="2024-01-04T00:00:00Z" length="2"/></url>
  <url><loc>{base}/set2/c.txt</loc><rs:md change="created"/></url>
  <url><loc>{base}/set2/d.txt</loc><rs:md change="created" datetime="9999-12-31T00:00:00Z" length="1"/></url>
</urlset>`}
	base := site(t, pages)
	rep := inspect(t, base)
	require.Len(t, rep.Sets, 2)

	set1 := rep.Sets[0]
	assert.Equal(t, int64(1), set1.Resources, "the Resource List Index's one child was read")
	require.NotNil(t, set1.ListedAt)
	assert.Equal(t, "2024-01-02T00:00:00Z", set1.ListedAt.Format(time.RFC3339), "the Resource List's at")

	// The change documents are named, but read (once) by package changes,
	// which fills their reports, the changes and the follow plan in
	// (changes.Inspect: TestInspectReportsChangeDocuments,
	// TestTheThreeReadersAgreeOnHandWrittenSources).
	for _, sr := range rep.Sets {
		cl := docReport(t, sr, resourcesync.CapChangeList)
		assert.Empty(t, cl.Error, "not read here")
		assert.Zero(t, cl.Entries, "not read here")
		assert.Zero(t, sr.Changes)
	}
}

func TestInspectIndexChildFailure(t *testing.T) {
	pages := twoSets()
	pages["/set1/rli.xml"] = page{body: `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <sitemap><loc>{base}/set1/rl-part1.xml</loc></sitemap>
  <sitemap><loc>{base}/set1/rl-part2.xml</loc></sitemap>
</sitemapindex>`}
	base := site(t, pages)
	rep := inspect(t, base)
	rl := docReport(t, rep.Sets[0], resourcesync.CapResourceList)
	assert.True(t, rl.Index)
	assert.Equal(t, 2, rl.Documents)
	assert.Equal(t, int64(1), rl.Entries)
	require.Len(t, rl.Failed, 1)
	assert.Equal(t, base+"set1/rl-part2.xml", rl.Failed[0].URL)
	assert.Contains(t, rl.Failed[0].Msg, "404")
}

func TestInspectSetWithoutChangeList(t *testing.T) {
	base := site(t, map[string]page{"/rl.xml": {body: resList}})
	rep := inspect(t, base+"rl.xml")
	require.Len(t, rep.Sets, 1)
	assert.Equal(t, int64(1), rep.Sets[0].Resources)
	assert.Zero(t, rep.Sets[0].Changes)
}

// A deviation of a document discovery read the start of, and Inspect read
// whole (counting more of it), is listed once, under the document; what
// discovery noted that is no deviation stays, and is not counted.
func TestSettleListsEachDeviationOnce(t *testing.T) {
	noZone := Problem{URL: "http://h/rl.xml", Line: 3, Msg: "datetime without time zone: 2013-01-03T09:00:00", Clause: "ResourceSync 1.1 §7", Reading: "UTC assumed"}
	whole := noZone
	whole.Count = 4
	unnamed := Problem{URL: "http://h/caps.xml", Msg: "document not named by the document its links lead to", Clause: "ResourceSync 1.1 §8", Reading: "read as a set of its own"}
	note := Problem{URL: "http://h/robots.txt", Msg: "robots.txt names a sitemap that is not a ResourceSync document; skipped"}
	rep := &Report{
		Warnings: []Problem{noZone, unnamed, note},
		Sets:     []SetReport{{Documents: []DocReport{{URL: "http://h/rl.xml", Warnings: []Problem{whole}}}}},
	}
	rep.Settle()
	assert.Equal(t, []Problem{unnamed, note}, rep.Warnings)
	assert.Equal(t, 2, rep.Deviations)
}
