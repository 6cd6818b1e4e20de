package changes

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documents below are written as py-resourcesync writes them (its
// executor/changelist.py, through the resync library's Sitemap writer):
// entries dated by lastmod alone (the md_datetime it sets is not an
// attribute resync writes), md5 in base64, a deleted resource's lastmod
// removed, and each round's changes appended to the open Change List
// (IncrementalChangeListExecutor), created first, then updated, then
// deleted. When the list is full a new one starts, and create_index moves
// both under changelist-index.xml, each linked to it by rel="index".

// pyEntry is one entry as resync writes it; lastmod "" leaves it out, as
// py-resourcesync does for a deletion.
func pyEntry(file, change, lastmod, md5 string, length int) string {
	lm := ""
	if lastmod != "" {
		lm = "<lastmod>" + lastmod + "</lastmod>"
	}
	return "\n<url><loc>BASE/" + file + "</loc>" + lm + `<rs:md change="` + change + `" hash="md5:` + md5 +
		`" length="` + itoa(length) + `" type="text/plain"/></url>`
}

// pyChangeList is a Change List as py-resourcesync writes it: from is the
// Resource List's completed time; index, when set, links the index.
func pyChangeList(index string, entries ...string) string {
	ln := `<rs:ln href="BASE/capabilitylist.xml" rel="up"/>`
	if index != "" {
		ln += `<rs:ln href="BASE` + index + `" rel="index"/>`
	}
	return `<urlset ` + ns + `>` + ln + `<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>` +
		strings.Join(entries, "") + "\n</urlset>"
}

const (
	md5Hello  = "XUFAKrxLKna5cZ2REBfFkg==" // "hello"
	md5Hello2 = "boCcvaBzKsSEWRalkBb5VA==" // "hello2"
)

// Issue 32 row 7: b.txt is created, deleted (written with no lastmod: an
// undated entry) and created again in later rounds of one Change List. The
// list is then topped up and moved under a new Change List Index, so it is
// read again whole, every entry behind the position. The undated deletion
// is superseded in its own document by the dated re-creation: it is never
// applied, and b.txt stays.
func TestAnUndatedEntryALaterOneSupersedesIsNeverApplied(t *testing.T) {
	rounds := []string{
		pyEntry("b.txt", "created", "2024-01-02T00:00:00Z", md5Hello, 5),
		pyEntry("b.txt", "deleted", "", md5Hello, 5),
		pyEntry("b.txt", "created", "2024-01-04T00:00:00Z", md5Hello2, 6),
	}
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/changelist_0001.xml"), "/rl.xml": resList,
		"/changelist_0001.xml": pyChangeList("", rounds...),
	})
	f, cat, _ := followDocs(t, s)
	require.NoError(t, poll(t, f))
	require.EqualValues(t, 6, lengthOf(t, cat, s.base+"/b.txt"), "the re-creation is the last change")

	topped := append(rounds, pyEntry("c.txt", "created", "2024-01-05T00:00:00Z", md5Hello, 5))
	s.set("/changelist_0001.xml", pyChangeList("/changelist-index.xml", topped...))
	s.set("/changelist_0002.xml", pyChangeList("/changelist-index.xml",
		pyEntry("d.txt", "created", "2024-01-06T00:00:00Z", md5Hello, 5)))
	s.set("/changelist-index.xml", `<sitemapindex `+ns+`><rs:ln href="BASE/capabilitylist.xml" rel="up"/>
<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>BASE/changelist_0001.xml</loc><rs:md from="2024-01-01T00:00:00Z"/></sitemap>
<sitemap><loc>BASE/changelist_0002.xml</loc><rs:md from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`)
	s.set("/caps.xml", capList("/changelist-index.xml"))
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 5, lengthOf(t, cat, s.base+"/c.txt"))
	assert.EqualValues(t, 5, lengthOf(t, cat, s.base+"/d.txt"))
	assert.EqualValues(t, 6, lengthOf(t, cat, s.base+"/b.txt"), "the superseded undated deletion is not applied")
	assert.Equal(t, "2024-01-06T00:00:00Z", f.Positions()[s.base+"/caps.xml"].Time.UTC().Format(time.RFC3339))

	// Truth, drift repair's, reads the same documents from the Resource
	// List's time: b.txt is there too.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	truth, err := Truth(ctx, f.s)
	require.NoError(t, err)
	assert.EqualValues(t, 6, lengthOf(t, truth, s.base+"/b.txt"))
}
