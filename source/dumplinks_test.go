package source

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/copies"
	"rsfs/resourcesync"
)

// A manifest entry's own rs:ln elements stay with the resource: a
// dump-only resource has them (before its copy), and a listed resource of
// the same version gains those its Resource List entry lacks.
func TestDumpManifestLinksKept(t *testing.T) {
	at := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	described := resourcesync.Link{Rel: "describedby", Href: "http://example.com/meta/res1.xml", Length: resourcesync.NoLength}
	memento := resourcesync.Link{Rel: "memento", Href: "http://example.com/2024/res1", Modified: at, Length: resourcesync.NoLength}
	var d dumpCopies
	for _, uri := range []string{"http://example.com/res1", "http://example.com/res2"} {
		d.add(uri, dumpCopy{link: resourcesync.Link{Rel: copies.DumpRel, Href: "http://example.com/p.zip", Path: "/x", Length: 1, Modified: at},
			entry: resourcesync.Entry{Loc: uri, Lastmod: at, Links: []resourcesync.Link{described, memento}}, at: at})
	}
	listed := &catalog.Resource{URI: "http://example.com/res1", Length: 1, Lastmod: at, Links: []resourcesync.Link{described}}
	d.attach(listed)
	require.Len(t, listed.Links, 3)
	assert.Equal(t, []string{"describedby", copies.DumpRel, "memento"}, []string{listed.Links[0].Rel, listed.Links[1].Rel, listed.Links[2].Rel})

	only := d.unlisted()
	require.Len(t, only, 1)
	assert.Equal(t, "http://example.com/res2", only[0].URI)
	require.Len(t, only[0].Links, 3)
	assert.Equal(t, described, only[0].Links[0])
	assert.Equal(t, memento, only[0].Links[1])
	assert.Equal(t, copies.DumpRel, only[0].Links[2].Rel)
	assert.Equal(t, 1, only[0].Links[2].Pri)
}
