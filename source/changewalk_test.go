package source

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walkSite serves docs (with {base} replaced by the server's URL) and
// zips on 127.0.0.1 and returns its URL.
func walkSite(t *testing.T, docs map[string]string, zips map[string][]byte) string {
	t.Helper()
	base, _ := countedSite(t, docs, zips)
	return base
}

// countedSite is walkSite, with gets: the whole-document GETs of each path
// since the last call (a package's HEAD and ranged reads not counted).
func countedSite(t *testing.T, docs map[string]string, zips map[string][]byte) (string, func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Range") == "" {
			mu.Lock()
			counts[r.URL.Path]++
			mu.Unlock()
		}
		if zb, ok := zips[r.URL.Path]; ok {
			w.Header().Set("ETag", `"`+r.URL.Path+`"`)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(zb))
			return
		}
		body, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(strings.ReplaceAll(body, "{base}", base)))
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	return base, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := counts
		counts = map[string]int{}
		return out
	}
}

func zipOf(t *testing.T, members map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// changeDumpSite is a Source with a Resource List of a.txt and a Change
// Dump Index whose chain of indexes is nested levels deep above a Change
// Dump of one package, which creates n.txt; beside the chain the top index
// names a Change Dump that is gone (404).
func changeDumpSite(t *testing.T, levels int) string {
	t.Helper()
	docs := map[string]string{
		"/caps.xml": `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/cdi0.xml</loc><rs:md capability="changedump"/></url></urlset>`,
		"/rl.xml": resList,
		"/cd.xml": `<urlset ` + nsXML + `><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>
<url><loc>{base}/p.zip</loc><rs:md type="application/zip"/></url></urlset>`,
	}
	for i := 0; i < levels; i++ {
		next := fmt.Sprintf("{base}/cdi%d.xml", i+1)
		if i == levels-1 {
			next = "{base}/cd.xml"
		}
		gone := ""
		if i == 0 {
			gone = `<sitemap><loc>{base}/gone.xml</loc><rs:md capability="changedump"/></sitemap>`
		}
		docs[fmt.Sprintf("/cdi%d.xml", i)] = `<sitemapindex ` + nsXML + `><rs:md capability="changedump"/>` + gone +
			`<sitemap><loc>` + next + `</loc><rs:md capability="changedump"/></sitemap></sitemapindex>`
	}
	var base string
	manifest := `<urlset ` + nsXML + `><rs:md capability="changedump-manifest" at="2024-01-03T00:00:00Z"/>
<url><loc>BASE/n.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod><rs:md change="created" datetime="2024-01-03T00:00:00Z" length="4" path="/res/n.txt"/></url></urlset>`
	zips := map[string][]byte{}
	base = walkSite(t, docs, zips)
	zips["/p.zip"] = zipOf(t, map[string]string{"manifest.xml": strings.ReplaceAll(manifest, "BASE", base), "res/n.txt": "nnnn"})
	return base
}

// A load reads a Change Dump Index with the one walker of change
// documents: indexes nested up to MaxDepth under the one the Capability
// List names are read, a child that cannot be read is a failure of its
// own (named in the unread dumps, under the index) while its siblings are
// read, and a document nested deeper is not read.
func TestLoadWalksChangeDumpIndexesByTheOneRule(t *testing.T) {
	for _, tc := range []struct {
		levels   int // indexes above the Change Dump: it is at depth levels
		loaded   bool
		failures []string
	}{
		{levels: 1, loaded: true, failures: []string{"gone.xml"}},
		{levels: 3, loaded: true, failures: []string{"gone.xml"}}, // MaxDepth, spelled out: a mutation of it fails here
		{levels: 4, loaded: false, failures: []string{"gone.xml", "cd.xml: indexes nested too deep"}},
	} {
		t.Run(fmt.Sprintf("depth %d", tc.levels), func(t *testing.T) {
			base := changeDumpSite(t, tc.levels)
			s, cat, _, err := load(t, base+"/caps.xml")
			require.NoError(t, err)
			_, ok := cat.ByURI(base + "/n.txt")
			assert.Equal(t, tc.loaded, ok, "the Change Dump's resource, beside a sibling that is gone")
			_, ok = cat.ByURI(base + "/a.txt")
			assert.True(t, ok, "the Resource List's")
			indexUnreadFor(t, s, base+"/cdi0.xml", tc.failures)
		})
	}
}

// indexUnreadFor checks that index, the first set's only unread dump, is
// unread for its children's failures, each named once.
func indexUnreadFor(t *testing.T, s *Source, index string, failures []string) {
	t.Helper()
	unread := s.UnreadDumps(s.Sets()[0])
	require.Len(t, unread, 1, "the index is unread, for its children")
	err := unread[index].Err
	require.Error(t, err)
	for _, f := range failures {
		assert.ErrorContains(t, err, f)
	}
	assert.Equal(t, len(failures), strings.Count(err.Error(), "\n")+1, "each failure once: %v", err)
}

// listIndexSite is a Source whose Capability List names a Resource List of
// b.txt and a Resource List Index whose chain of indexes is nested levels
// deep above a Resource List of a.txt.
func listIndexSite(t *testing.T, levels int) string {
	t.Helper()
	docs := map[string]string{
		"/caps.xml": `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>{base}/rli0.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/direct.xml</loc><rs:md capability="resourcelist"/></url></urlset>`,
		"/rl.xml":     resList,
		"/direct.xml": strings.ReplaceAll(resList, "/a.txt", "/b.txt"),
	}
	for i := 0; i < levels; i++ {
		next := fmt.Sprintf("{base}/rli%d.xml", i+1)
		if i == levels-1 {
			next = "{base}/rl.xml"
		}
		docs[fmt.Sprintf("/rli%d.xml", i)] = `<sitemapindex ` + nsXML + `><rs:md capability="resourcelist"/>` +
			`<sitemap><loc>` + next + `</loc></sitemap></sitemapindex>`
	}
	return walkSite(t, docs, nil)
}

// A load and inspect follow a Resource List Index's chain by the same rule
// as every walk of indexes: to MaxDepth (3) under the document the
// Capability List names, and not deeper (a failure of its own, the other
// lists loaded).
func TestResourceListIndexesByTheOneRule(t *testing.T) {
	for _, tc := range []struct {
		levels int
		loaded bool
	}{{1, true}, {3, true}, {4, false}} {
		t.Run(fmt.Sprintf("depth %d", tc.levels), func(t *testing.T) {
			base := listIndexSite(t, tc.levels)
			s, cat, _, err := load(t, base+"/caps.xml")
			require.NoError(t, err)
			_, ok := cat.ByURI(base + "/a.txt")
			assert.Equal(t, tc.loaded, ok, "the nested list's resource")
			_, ok = cat.ByURI(base + "/b.txt")
			assert.True(t, ok, "the other list's")
			unread := s.UnreadLists(s.Sets()[0])
			if tc.loaded {
				assert.Empty(t, unread)
			} else {
				require.Len(t, unread, 1)
				assert.ErrorContains(t, unread[base+"/rl.xml"].Err, "nested too deep")
			}

			s, err = discover(t, base+"/caps.xml")
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rep, err := s.Inspect(ctx)
			require.NoError(t, err)
			require.Len(t, rep.Sets, 1)
			want := int64(1)
			if tc.loaded {
				want = 2
			}
			assert.Equal(t, want, rep.Sets[0].Resources, "inspect counts what a load loads")
		})
	}
}

// A Capability List that names a package as its Change Dump or Resource
// Dump (DSpace's changedump_*.zip) is read as a dump of that one package,
// by the one check every walk of dumps asks: its members load.
func TestAPackageNamedAsADumpLoads(t *testing.T) {
	for _, c := range []string{"changedump", "resourcedump"} {
		t.Run(c, func(t *testing.T) {
			docs := map[string]string{
				"/caps.xml": `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>{base}/run1.zip</loc><rs:md capability="` + c + `"/></url></urlset>`,
			}
			zips := map[string][]byte{}
			base := walkSite(t, docs, zips)
			zips["/run1.zip"] = zipOf(t, map[string]string{"manifest.xml": `<urlset ` + nsXML + `><rs:md capability="` + c + `-manifest" at="2024-01-03T00:00:00Z"/>
<url><loc>` + base + `/n.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod><rs:md change="created" length="4" path="/res/n.txt"/></url></urlset>`,
				"res/n.txt": "nnnn"})
			s, cat, _, err := load(t, base+"/caps.xml")
			require.NoError(t, err)
			_, ok := cat.ByURI(base + "/n.txt")
			assert.True(t, ok, "the package's member")
			assert.Empty(t, s.UnreadDumps(s.Sets()[0]))
		})
	}
}
