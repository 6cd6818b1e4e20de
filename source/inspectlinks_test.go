package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspect counts a set's links by relation, in its Resource List and its
// Change List, with the first met as the example.
func TestInspectCountsLinks(t *testing.T) {
	pages := map[string]page{
		"/rl.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <url><loc>{base}/a.txt</loc><rs:md length="1"/>
    <rs:ln rel="describedby" href="{base}/meta/a.xml"/>
    <rs:ln rel="http://www.openarchives.org/rs/terms/patch" href="{base}/a.diff"/>
  </url>
  <url><loc>{base}/b.txt</loc><rs:md length="1"/>
    <rs:ln rel="describedby" href="{base}/meta/b.xml"/>
  </url>
  <url><loc>{base}/c.txt</loc><rs:md length="1"/></url>
</urlset>`},
	}
	base := site(t, pages)
	rep := inspect(t, base+"rl.xml")
	require.Len(t, rep.Sets, 1)
	links := rep.Sets[0].Links
	require.Len(t, links, 2)
	d := links["describedby"]
	require.NotNil(t, d)
	assert.Equal(t, int64(2), d.Count)
	assert.Equal(t, "user.resourcesync.link.describedby", d.Attr)
	assert.Equal(t, base+"a.txt", d.Example.Resource)
	assert.Equal(t, base+"meta/a.xml", d.Example.Href)
	p := links["http://www.openarchives.org/rs/terms/patch"]
	require.NotNil(t, p)
	assert.Equal(t, int64(1), p.Count)
	assert.Equal(t, "user.resourcesync.link.patch", p.Attr)
}
