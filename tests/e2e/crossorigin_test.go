package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Resource List Index whose children sit on another origin (a CDN, say):
// inspect reads them as mount does, with one origin policy (issue 32 row
// 5).
func TestIndexChildrenOnAnotherOrigin(t *testing.T) {
	t.Parallel()
	cdn := startHandSource(t, map[string]string{
		"/lists/part1.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{site}/caps.xml"/>
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <url><loc>{site}/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="6"/></url>
</urlset>`,
	})
	site := startHandSource(t, map[string]string{
		"/caps.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl-index.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`,
		"/rl-index.xml": `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/caps.xml"/>
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <sitemap><loc>CDN/lists/part1.xml</loc></sitemap>
</sitemapindex>`,
		"/a.txt": "alpha\n",
	})
	site.set("/rl-index.xml", strings.ReplaceAll(site.pages["/rl-index.xml"], "CDN", cdn.localhost()))
	cdn.set("/lists/part1.xml", strings.ReplaceAll(cdn.pages["/lists/part1.xml"], "{site}", site.base))

	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", site.base+"/caps.xml")
	require.NoError(t, err, stderr)
	assert.NotContains(t, out, "host not allowed")
	assert.Contains(t, out, "resources:     1 (6 B)")
	assert.Equal(t, 1, cdn.requests("/lists/part1.xml"))

	m := mount(t, site.base+"/caps.xml", "--poll-interval", "0")
	assert.Equal(t, []string{"a.txt"}, relFiles(t, m.dir))
	assert.Equal(t, 2, cdn.requests("/lists/part1.xml"))
}

// A page whose <link rel="resourcesync"> names a Capability List on another
// host: the standard has that Capability List pertain to the page (1.0
// §10.3, 1.1 §9.2), so discovery follows it and admits its origin, as it
// does the Source's own (issue 32 row 5).
func TestPageLinksToAnotherHost(t *testing.T) {
	t.Parallel()
	src := startHandSource(t, handSet())
	page := startHandSource(t, map[string]string{
		"/": `<!DOCTYPE html>
<html>
  <head>
    <title>Our data</title>
    <link rel="resourcesync" href="LINK"/>
  </head>
  <body>...</body>
</html>`,
	})
	// The Source is on another origin (port) than the page.
	page.set("/", strings.Replace(page.pages["/"], "LINK", src.base+"/set/caps.xml", 1))
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", page.base+"/")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Resource set 1: "+src.base+"/set/caps.xml")
	assert.NotContains(t, out, "Resource set 2")
	assert.Contains(t, out, "resources:     2 (11 B)")

	m := mount(t, page.base+"/", "--poll-interval", "0")
	assert.Equal(t, []string{"set/a.txt", "set/b.txt"}, relFiles(t, m.dir))
	got, err := os.ReadFile(m.path("set/b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "beta\n", string(got))
}

// A request the origin policy refuses names the flag that allows it: the
// URL given redirects to another host, which a Source's documents do not
// name.
func TestRefusedHostNamesTheFlag(t *testing.T) {
	t.Parallel()
	src := startHandSource(t, handSet())
	moved := httptest.NewServer(http.RedirectHandler(src.localhost()+"/set/caps.xml", http.StatusFound))
	t.Cleanup(moved.Close)
	_, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", moved.URL+"/caps.xml")
	require.Error(t, err)
	assert.Contains(t, stderr, "host not allowed (--allow-host "+src.localhost()+" allows it)")
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", "--allow-host", src.localhost(), moved.URL+"/caps.xml")
	require.NoError(t, err, "the flag the error names: %s", stderr)
	assert.Contains(t, out, "resources:     2 (11 B)")
}
