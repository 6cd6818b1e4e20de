package e2e

// Issue 32 row 7, through a real mount: a Change List as py-resourcesync
// writes it (its executor/changelist.py through the resync library's
// writer: entries dated by lastmod alone, md5 in base64, a deletion's
// lastmod removed, each round appended to the open list, and the lists
// moved under changelist-index.xml once a second one starts).

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pyEntry is one entry as resync writes it; lastmod "" leaves it out, as
// py-resourcesync does for a deletion.
func pyEntry(file, change, lastmod, md5 string, length int) string {
	lm := ""
	if lastmod != "" {
		lm = "<lastmod>" + lastmod + "</lastmod>"
	}
	return "\n<url><loc>{base}/files/" + file + "</loc>" + lm + `<rs:md change="` + change + `" hash="md5:` + md5 +
		`" length="` + strconv.Itoa(length) + `" type="text/plain"/></url>`
}

// pyChangeList is a Change List as py-resourcesync writes it; index, when
// set, is the index it links to.
func pyChangeList(index string, entries ...string) string {
	ln := `<rs:ln href="{base}/capabilitylist.xml" rel="up"/>`
	if index != "" {
		ln += `<rs:ln href="{base}` + index + `" rel="index"/>`
	}
	return `<?xml version='1.0' encoding='UTF-8'?>` + "\n<urlset " + hostileNS + ">" + ln +
		`<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>` + strings.Join(entries, "") + "\n</urlset>"
}

func pyCapabilityList(changeList string) string {
	return `<?xml version='1.0' encoding='UTF-8'?>` + "\n<urlset " + hostileNS + `><rs:md capability="capabilitylist"/>
<url><loc>{base}/resourcelist_0000.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}` + changeList + `</loc><rs:md capability="changelist"/></url></urlset>`
}

const (
	pyMD5Hello  = "XUFAKrxLKna5cZ2REBfFkg==" // "hello"
	pyMD5Hello2 = "boCcvaBzKsSEWRalkBb5VA==" // "hello2"
)

// b.txt is created, deleted (undated) and created again in later rounds of
// one Change List; the list is then topped up and moved under a new index,
// so the follower reads it again whole, every entry behind its position.
// The undated deletion, superseded in its own list by the re-creation, is
// never applied: b.txt stays, with the re-creation's bytes.
func TestPyResourceSyncUndatedDeletionThenRecreation(t *testing.T) {
	t.Parallel()
	site := startHostileSite(t)
	site.text("/files/a.txt", "hello")
	site.text("/files/b.txt", "hello2")
	site.text("/files/c.txt", "hello")
	site.text("/resourcelist_0000.xml", `<?xml version='1.0' encoding='UTF-8'?>`+"\n<urlset "+hostileNS+`>
<rs:ln href="{base}/capabilitylist.xml" rel="up"/><rs:md at="2024-01-01T00:00:00Z" capability="resourcelist" completed="2024-01-01T00:00:00Z"/>
<url><loc>{base}/files/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md hash="md5:`+pyMD5Hello+`" length="5" type="text/plain"/></url>
</urlset>`)
	rounds := []string{
		pyEntry("b.txt", "created", "2024-01-02T00:00:00Z", pyMD5Hello, 5),
		pyEntry("b.txt", "deleted", "", pyMD5Hello, 5),
		pyEntry("b.txt", "created", "2024-01-04T00:00:00Z", pyMD5Hello2, 6),
	}
	site.text("/changelist_0001.xml", pyChangeList("", rounds...))
	site.text("/capabilitylist.xml", pyCapabilityList("/changelist_0001.xml"))

	m := mount(t, site.base+"/capabilitylist.xml", "--poll-interval", "1s")
	waitFor(t, 30*time.Second, "b.txt, re-created, to be served", func() bool {
		got, err := os.ReadFile(m.path("files/b.txt"))
		return err == nil && string(got) == "hello2"
	})

	// The next round: c.txt, appended to the full list, which moves under
	// an index with a new list for what follows.
	site.text("/changelist_0001.xml", pyChangeList("/changelist-index.xml",
		append(rounds, pyEntry("c.txt", "created", "2024-01-05T00:00:00Z", pyMD5Hello, 5))...))
	site.text("/changelist_0002.xml", pyChangeList("/changelist-index.xml"))
	site.text("/changelist-index.xml", `<?xml version='1.0' encoding='UTF-8'?>`+"\n<sitemapindex "+hostileNS+`>
<rs:ln href="{base}/capabilitylist.xml" rel="up"/><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>{base}/changelist_0001.xml</loc><rs:md from="2024-01-01T00:00:00Z"/></sitemap>
<sitemap><loc>{base}/changelist_0002.xml</loc><rs:md from="2024-01-01T00:00:00Z"/></sitemap>
</sitemapindex>`)
	site.text("/capabilitylist.xml", pyCapabilityList("/changelist-index.xml"))
	waitFor(t, 30*time.Second, "c.txt, in the list re-read whole, to appear", func() bool {
		_, err := os.Stat(m.path("files/c.txt"))
		return err == nil
	})
	got, err := os.ReadFile(m.path("files/b.txt"))
	require.NoError(t, err, "b.txt was deleted by the undated entry its re-creation supersedes")
	require.Equal(t, "hello2", string(got))
}
