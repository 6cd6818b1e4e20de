package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Documents as DSpace's ResourceSync module writes them, through the
// ResourceSync Java library (org.openarchives.resourcesync.ResourceSync:
// NS_SITEMAP = Namespace.getNamespace("sm", ...), serialized by JDOM): the
// Sitemap elements carry the prefix sm, and no default namespace is
// declared.
var dspacePages = map[string]string{
	"/.well-known/resourcesync": `<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description" />
  <sm:url>
    <sm:loc>{base}/rs/capabilitylist.xml</sm:loc>
    <rs:md capability="capabilitylist" />
  </sm:url>
</sm:urlset>`,
	"/rs/capabilitylist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/.well-known/resourcesync" />
  <rs:md capability="capabilitylist" />
  <sm:url>
    <sm:loc>{base}/rs/resourcelist.xml</sm:loc>
    <rs:md capability="resourcelist" />
  </sm:url>
</sm:urlset>`,
	"/rs/resourcelist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/rs/capabilitylist.xml" />
  <rs:md capability="resourcelist" at="2024-03-01T10:00:00Z" />
  <sm:url>
    <sm:loc>{base}/bitstream/handle/123456789/1/thesis.pdf</sm:loc>
    <sm:lastmod>2024-02-29T08:30:00Z</sm:lastmod>
    <rs:md hash="md5:{md5 a thesis}" length="9" type="application/pdf" />
  </sm:url>
  <sm:url>
    <sm:loc>{base}/metadata/handle/123456789/1/dc.xml</sm:loc>
    <sm:lastmod>2024-02-29T08:31:00Z</sm:lastmod>
    <rs:md length="6" type="application/xml" />
  </sm:url>
</sm:urlset>`,
	"/bitstream/handle/123456789/1/thesis.pdf": "a thesis\n",
	"/metadata/handle/123456789/1/dc.xml":      "<dc/>\n",
}

// Documents with a prefixed Sitemap namespace are ResourceSync documents
// when given as the URL (issue 32 row 2): the namespace decides, not the
// prefix. Each of the Source's URLs is discovered; the Resource List's
// mounts.
func TestPrefixedSitemapNamespace(t *testing.T) {
	t.Parallel()
	pages := map[string]string{}
	for p, body := range dspacePages {
		pages[p] = withMD5(body)
	}
	h := startHandSource(t, pages)
	for _, u := range []string{"/", "/.well-known/resourcesync", "/rs/capabilitylist.xml", "/rs/resourcelist.xml"} {
		out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", h.base+u)
		require.NoError(t, err, "inspect %s: %s", u, stderr)
		assert.Contains(t, out, "Resource set 1: "+h.base+"/rs/capabilitylist.xml", "inspect %s", u)
		assert.Contains(t, out, "resources:     2 (15 B)", "inspect %s", u)
	}
	m := mount(t, h.base+"/rs/resourcelist.xml")
	assert.Equal(t, []string{"bitstream/handle/123456789/1/thesis.pdf", "metadata/handle/123456789/1/dc.xml"}, relFiles(t, m.dir))
	got, err := os.ReadFile(m.path("bitstream/handle/123456789/1/thesis.pdf"))
	require.NoError(t, err)
	assert.Equal(t, "a thesis\n", string(got))
	st, err := os.Stat(m.path("metadata/handle/123456789/1/dc.xml"))
	require.NoError(t, err)
	assert.Equal(t, time.Date(2024, 2, 29, 8, 31, 0, 0, time.UTC), st.ModTime().UTC())
}
