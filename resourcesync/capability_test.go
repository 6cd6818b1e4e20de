package resourcesync

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Real Sources (DSpace among them) name an index's capability with an
// "index" suffix; rsfs reads the standard name, with one warning that names
// the document.
func TestNonStandardCapabilityNames(t *testing.T) {
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
  <url><loc>http://example.com/rl.xml</loc><rs:md capability="resourcelistindex"/></url>
  <url><loc>http://example.com/rd.xml</loc><rs:md capability="resourcedumpindex"/></url>
  <url><loc>http://example.com/cl.xml</loc><rs:md capability="changelistindex"/></url>
  <url><loc>http://example.com/cd.xml</loc><rs:md capability="ChangeDump-Index"/></url>
  <url><loc>http://example.com/x.xml</loc><rs:md capability="resourcelist-archive"/></url>
</urlset>`
	d, err := Parse(strings.NewReader(doc), "http://example.com/caps.xml", Options{})
	require.NoError(t, err)
	var got []string
	for _, e := range d.Entries {
		got = append(got, string(e.MD.Capability))
	}
	assert.Equal(t, []string{"resourcelist", "resourcedump", "changelist", "changedump", "resourcelist-archive"}, got)
	var named []Warning
	for _, w := range d.Warnings {
		if strings.Contains(w.Msg, "non-standard capability") {
			named = append(named, w)
		}
	}
	require.Len(t, named, 1, "one warning per document: %v", d.Warnings)
	assert.Equal(t, "http://example.com/caps.xml", named[0].URL)
	assert.Contains(t, named[0].Msg, `"resourcelistindex" read as "resourcelist"`)
}

func TestNonStandardCapabilityInHeader(t *testing.T) {
	const doc = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="changelistindex" from="2024-01-01T00:00:00Z"/>
  <sitemap><loc>http://example.com/cl1.xml</loc></sitemap>
</sitemapindex>`
	d, err := Parse(strings.NewReader(doc), "http://example.com/cli.xml", Options{})
	require.NoError(t, err)
	assert.Equal(t, CapChangeList, d.Header.Capability())
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, "http://example.com/cli.xml", d.Warnings[0].URL)
	assert.Contains(t, d.Warnings[0].Msg, `non-standard capability name: "changelistindex" read as "changelist"`)
}

// WEKO3's Source Description names its Capability List with
// capability="capability" (invenio_resourcesyncserver/utils.py,
// render_well_know_resourcesync): read as "capabilitylist", with the
// warning.
func TestWEKOCapabilityName(t *testing.T) {
	const doc = `<?xml version='1.0' encoding='UTF-8'?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:ln href="https://example.jp/" rel="describedby" /><rs:md capability="description" /><url><loc>https://example.jp/resync/capability.xml</loc><rs:md capability="capability" /></url></urlset>`
	d, err := Parse(strings.NewReader(doc), "https://example.jp/.well-known/resourcesync", Options{})
	require.NoError(t, err)
	require.Len(t, d.Entries, 1)
	assert.Equal(t, CapCapabilityList, d.Entries[0].MD.Capability)
	require.Len(t, d.Warnings, 1)
	assert.Contains(t, d.Warnings[0].Msg, `non-standard capability name: "capability" read as "capabilitylist"`)
}
