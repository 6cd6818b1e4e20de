package e2e

// Issue 32 row 4, through a real mount: Change List entries with no change
// attribute, as CORE writes them (1.1 §12.1 requires one).

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each entry without change is resolved by asking its resource: one that
// answers joins the tree (or is updated) with the bytes it serves, one
// that answers 404 leaves it. The log says so once for the document, and
// `rsfs status` names it.
func TestChangeListEntriesWithoutChange(t *testing.T) {
	t.Parallel()
	site := startHostileSite(t)
	site.text("/files/kept.txt", "kept\n")
	site.text("/files/gone.txt", "gone soon\n")
	site.text("/resourcelist.xml", `<?xml version="1.0" encoding="UTF-8"?>`+"\n<urlset "+hostileNS+`>
<rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>{base}/files/kept.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="5"/></url>
<url><loc>{base}/files/gone.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="10"/></url>
</urlset>`)
	site.text("/changelist.xml", `<?xml version="1.0" encoding="UTF-8"?>`+"\n<urlset "+hostileNS+`>
<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></urlset>`)
	site.text("/capabilitylist.xml", `<?xml version="1.0" encoding="UTF-8"?>`+"\n<urlset "+hostileNS+`>
<rs:md capability="capabilitylist"/>
<url><loc>{base}/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/changelist.xml</loc><rs:md capability="changelist"/></url></urlset>`)
	m := mount(t, site.base+"/capabilitylist.xml", "--poll-interval", "1s")
	readIs(t, m.path("files/gone.txt"), "gone soon\n")

	site.text("/files/new.txt", "created, no change attribute\n")
	site.page("/files/gone.txt", hostilePage{status: 404})
	site.text("/changelist.xml", `<?xml version="1.0" encoding="UTF-8"?>`+"\n<urlset "+hostileNS+`>
<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<url><loc>{base}/files/new.txt</loc><lastmod>2024-01-02T00:00:00Z</lastmod></url>
<url><loc>{base}/files/gone.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod></url>
</urlset>`)
	waitFor(t, 30*time.Second, "new.txt to appear and gone.txt to leave", func() bool {
		_, errNew := os.Stat(m.path("files/new.txt"))
		_, errGone := os.Stat(m.path("files/gone.txt"))
		return errNew == nil && os.IsNotExist(errGone)
	})
	readIs(t, m.path("files/new.txt"), "created, no change attribute\n")
	readIs(t, m.path("files/kept.txt"), "kept\n")

	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", m.dir)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "warning: "+site.base+"/changelist.xml: 2 entries without a change attribute (1.1 §12.1 requires one)")
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(log), "change entry without a change attribute"), "one warning for the document")
}
