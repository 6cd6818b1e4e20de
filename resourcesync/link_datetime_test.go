package resourcesync

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An rs:ln dated by datetime (Memento's word) is read as modified; where
// both are given, modified (the standard's) wins.
func TestLinkDatetimeIsModified(t *testing.T) {
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
  <url>
    <loc>http://example.com/res1</loc>
    <rs:ln rel="memento" href="http://example.com/20130103070000/res1" datetime="2013-01-03T07:00:00Z"/>
    <rs:ln rel="memento" href="http://example.com/20130102070000/res1" datetime="2013-01-02T07:00:00Z" modified="2013-01-02T08:00:00Z"/>
  </url>
</urlset>`
	d, err := Parse(strings.NewReader(doc), "http://example.com/rl.xml", Options{})
	require.NoError(t, err)
	require.Len(t, d.Entries[0].Links, 2)
	assert.Equal(t, time.Date(2013, 1, 3, 7, 0, 0, 0, time.UTC), d.Entries[0].Links[0].Modified.UTC())
	assert.Equal(t, time.Date(2013, 1, 2, 8, 0, 0, 0, time.UTC), d.Entries[0].Links[1].Modified.UTC())
}
