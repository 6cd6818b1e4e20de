package source

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
)

// A Capability List names a Resource List that reads and a Resource Dump
// that answers 404: the load reads the list, keeps the dump as unread (with
// its error) and RetryUnreadDumps finds it readable once it is.
func TestUnreadableDumpLeftOutAndRetried(t *testing.T) {
	pages := map[string]page{
		"/caps.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/rd.xml</loc><rs:md capability="resourcedump"/></url>
</urlset>`},
		"/rl.xml": {body: resList},
	}
	base := site(t, pages)
	s, cat, _, err := load(t, base+"caps.xml")
	require.NoError(t, err)
	assert.Equal(t, 1, cat.Len())
	unread := s.UnreadDumps(s.Sets()[0])
	require.Len(t, unread, 1)
	assert.ErrorContains(t, unread[base+"rd.xml"].Err, "404")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	assert.False(t, s.RetryUnreadDumps(ctx), "still 404")
	pages["/rd.xml"] = page{body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="resourcedump" at="2024-01-02T03:04:05Z"/>
</urlset>`}
	assert.True(t, s.RetryUnreadDumps(ctx), "it reads now")
	_, err = s.LoadEach(ctx, func(*catalog.Resource) error { return nil })
	require.NoError(t, err)
	assert.Empty(t, s.UnreadDumps(s.Sets()[0]), "the reload read it")
}

// A Source whose only documents are dumps, none of which reads, has
// nothing to mount: the load fails, naming why.
func TestNoReadableDumpAndNoListFailsTheLoad(t *testing.T) {
	base := site(t, map[string]page{
		"/caps.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rd.xml</loc><rs:md capability="resourcedump"/></url>
</urlset>`},
		"/rd.xml": {status: http.StatusGone},
	})
	_, _, _, err := load(t, base+"caps.xml")
	require.Error(t, err)
	assert.ErrorContains(t, err, "no dump that names a package could be read")
	assert.ErrorContains(t, err, "410")
}
