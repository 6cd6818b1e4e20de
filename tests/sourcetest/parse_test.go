package sourcetest

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

// parseDoc fetches a document and reads it with the project's own reader.
func parseDoc(t *testing.T, url string) *resourcesync.Document {
	t.Helper()
	resp, b := get(t, url)
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	doc, err := resourcesync.Parse(bytes.NewReader(b), url, resourcesync.Options{})
	require.NoError(t, err, url)
	var ws []resourcesync.Warning
	for _, w := range doc.Warnings {
		// A 1.0 layout dates its documents by modified, not 1.1's at or
		// from: a deviation from 1.1 (inspect --strict lists it), read
		// right.
		if !doc.Header.MD.Modified.IsZero() && (strings.HasPrefix(w.Msg, "no at on the root rs:md") || strings.HasPrefix(w.Msg, "no from on the root rs:md")) {
			continue
		}
		ws = append(ws, w)
	}
	assert.Empty(t, ws, url)
	return doc
}

func TestDocumentsParseWithResourcesyncReader(t *testing.T) {
	for _, layout := range []Layout{Layout11, Layout10} {
		t.Run(layout.String(), func(t *testing.T) {
			src := start(t, Config{Resources: 300, PerList: 100, Gzip: true, Mirror: true, Layout: layout,
				Hashes: []string{"md5", "sha-256"}})
			upd := src.URL() + "data/d001/r000150.txt"
			require.NoError(t, src.Update(upd, []byte("changed")))
			require.NoError(t, src.Delete(src.URL()+"data/d000/r000001.txt"))

			wk := parseDoc(t, src.WellKnownURL())
			wantCap := resourcesync.CapDescription
			if layout == Layout10 {
				wantCap = resourcesync.CapCapabilityList
			}
			assert.Equal(t, wantCap, wk.Header.Capability())

			capl := parseDoc(t, src.CapabilityListURL(0))
			require.Len(t, capl.Entries, 2)
			assert.Equal(t, resourcesync.CapResourceList, capl.Entries[0].MD.Capability)

			idx := parseDoc(t, capl.Entries[0].Loc)
			assert.Equal(t, resourcesync.SitemapIndex, idx.Header.Root)
			byURI := map[string]resourcesync.Entry{}
			for _, p := range idx.Entries {
				page := parseDoc(t, p.Loc)
				assert.Equal(t, resourcesync.CapResourceList, page.Header.Capability())
				for _, e := range page.Entries {
					byURI[e.Loc] = e
				}
			}
			require.Len(t, byURI, 299)
			for _, r := range src.Resources() {
				e, ok := byURI[r.URI]
				require.True(t, ok, r.URI)
				assert.Equal(t, r.Hashes, e.MD.Hashes, r.URI)
				assert.Equal(t, r.Size, e.MD.Length, r.URI)
				assert.True(t, r.Lastmod.Equal(e.Lastmod), r.URI)
				require.Len(t, e.Links, 1)
				assert.Equal(t, "duplicate", e.Links[0].Rel)
			}

			cl := parseDoc(t, capl.Entries[1].Loc)
			require.Len(t, cl.Entries, 2)
			assert.Equal(t, resourcesync.ChangeUpdated, cl.Entries[0].MD.Change)
			assert.Equal(t, resourcesync.ChangeDeleted, cl.Entries[1].MD.Change)
			assert.Equal(t, int64(7), cl.Entries[0].MD.Length)
		})
	}
}
