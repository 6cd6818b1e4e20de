package changes

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/status"
)

// Issue 32 row 4: CORE writes Change List entries with no change
// attribute (1.1 §12.1 requires one). Each is resolved by asking its
// resource: one that answers is created or updated (with the length it
// serves when the entry publishes none), one that answers 404 or 410 is
// deleted; one that fails otherwise holds the position and is retried. The
// document is named once in the log and in status.
func TestEntriesWithoutChangeAreResolvedByTheirResource(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl.xml"),
		"/rl.xml": `<urlset ` + ns + `><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url>
<url><loc>BASE/gone.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`,
		"/a.txt": "x", "/gone.txt": "g",
		"/cl.xml": changeList("2024-01-01T00:00:00Z", ""),
	})
	f, cat, log := followDocs(t, s)
	require.NoError(t, poll(t, f))

	s.set("/a.txt", "updated")
	s.set("/new.txt", "created!")
	s.set("/gone.txt", "")
	s.set("/cl.xml", `<urlset `+ns+`><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-02T00:00:00Z</lastmod></url>
<url><loc>BASE/new.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod></url>
<url><loc>BASE/gone.txt</loc><lastmod>2024-01-04T00:00:00Z</lastmod></url>
<url><loc>BASE/late.txt</loc><lastmod>2024-01-05T00:00:00Z</lastmod></url>
</urlset>`)
	s.fail("/late.txt", http.StatusServiceUnavailable)
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 7, lengthOf(t, cat, s.base+"/a.txt"), "updated, with the length it serves")
	assert.EqualValues(t, 8, lengthOf(t, cat, s.base+"/new.txt"), "created")
	assert.EqualValues(t, -1, lengthOf(t, cat, s.base+"/gone.txt"), "404: deleted")
	assert.EqualValues(t, -1, lengthOf(t, cat, s.base+"/late.txt"), "503: not applied yet")
	assert.Equal(t, "2024-01-04T00:00:00Z", f.Positions()[s.base+"/caps.xml"].Time.UTC().Format("2006-01-02T15:04:05Z07:00"),
		"the position holds before the change that could not be resolved")
	assert.Equal(t, 1, countOf(log.String(), "change entry without a change attribute"), "one warning per document")
	assert.Contains(t, log.String(), "cl.xml")
	st := f.Status().Sets[0]
	require.Len(t, st.Warnings, 1)
	assert.Equal(t, status.DocWarning{Doc: s.base + "/cl.xml", Msg: unsaidWarning(4)}, st.Warnings[0])

	s.set("/late.txt", "late")
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 4, lengthOf(t, cat, s.base+"/late.txt"), "resolved at the next poll")
	assert.Len(t, f.Status().Sets[0].Warnings, 1, "the list, unchanged (304), still says it")
}

func countOf(s, sub string) int { return strings.Count(s, sub) }
