package changes

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/resourcesync"
)

// truthSource serves hand-written documents: a Capability List naming a
// Resource List (at 2024-01-01), a Change List Index of two Change Lists
// and a Change Dump of one package. Each document is a template with %[1]s
// standing for the server's base URL.
type truthSource struct {
	mu   sync.Mutex
	base string
	docs map[string]string
	zip  []byte
}

func (ts *truthSource) serve(w http.ResponseWriter, r *http.Request) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if r.URL.Path == "/dump/p1.zip" {
		http.ServeContent(w, r, "p1.zip", time.Time{}, bytes.NewReader(ts.zip))
		return
	}
	if d, ok := ts.docs[r.URL.Path]; ok {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, d, ts.base)
		return
	}
	if strings.HasSuffix(r.URL.Path, ".txt") { // HEADs learn a length of 5
		w.Header().Set("Content-Length", "5")
		if r.Method == http.MethodGet {
			w.Write([]byte("hello"))
		}
		return
	}
	http.NotFound(w, r)
}

func startTruthSource(t *testing.T) *truthSource {
	t.Helper()
	ts := &truthSource{docs: map[string]string{
		"/caps.xml": `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>%[1]s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%[1]s/cli.xml</loc><rs:md capability="changelist"/></url>
<url><loc>%[1]s/cd.xml</loc><rs:md capability="changedump"/></url></urlset>`,
		"/rl.xml": `<urlset ` + nsXML + `><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%[1]s/a.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md length="1" hash="md5:0cc175b9c0f1b6a831c399e269772661"/></url>
<url><loc>%[1]s/b.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md length="1"/></url>
<url><loc>%[1]s/c.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`,
		"/cli.xml": `<sitemapindex ` + nsXML + `><rs:md capability="changelist" from="2023-01-01T00:00:00Z"/>
<sitemap><loc>%[1]s/cl0.xml</loc><rs:md from="2023-01-01T00:00:00Z" until="2023-12-01T00:00:00Z"/></sitemap>
<sitemap><loc>%[1]s/cl1.xml</loc><rs:md from="2023-12-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></sitemap>
<sitemap><loc>%[1]s/cl2.xml</loc><rs:md from="2024-01-02T00:00:00Z"/></sitemap></sitemapindex>`,
		// cl0.xml, closed before the lists' time, is not read (it would 404)
		"/cl1.xml": `<urlset ` + nsXML + `><rs:md capability="changelist" from="2023-12-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>%[1]s/b.txt</loc><lastmod>2023-12-15T00:00:00Z</lastmod><rs:md change="updated" datetime="2023-12-15T00:00:00Z" length="9"/></url>
<url><loc>%[1]s/g.txt</loc><rs:md change="created" length="3"/></url>
<url><loc>%[1]s/b.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md change="updated" length="1"/></url>
<url><loc>%[1]s/d.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md change="created" datetime="2024-01-01T00:00:00Z" length="4"/></url>
<url><loc>%[1]s/a.txt</loc><lastmod>2024-01-01T10:00:00Z</lastmod><rs:md change="updated" datetime="2024-01-01T10:00:00Z" length="2"/></url></urlset>`,
		"/cl2.xml": `<urlset ` + nsXML + `><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/>
<url><loc>%[1]s/c.txt</loc><rs:md change="deleted" datetime="2024-01-03T00:00:00Z"/></url>
<url><loc>%[1]s/a.txt</loc><lastmod>2024-01-04T00:00:00Z</lastmod><rs:md change="updated" datetime="2024-01-04T00:00:00Z" hash="md5:5d41402abc4b2a76b9719d911017c592"/></url>
<url><loc>%[1]s/e.txt</loc><rs:md change="created"/></url>
<url><loc>ftp://elsewhere/x.txt</loc><rs:md change="created" datetime="2024-01-04T00:00:00Z" length="1"/></url></urlset>`,
		"/cd.xml": `<urlset ` + nsXML + `><rs:md capability="changedump"/>
<url><loc>%[1]s/dump/p1.zip</loc><rs:md type="application/zip" from="2024-01-04T00:00:00Z" until="2024-01-06T00:00:00Z"/></url></urlset>`,
	}}
	srv := httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(srv.Close)
	ts.base = srv.URL
	ts.zip = changeDumpPackage(t, srv.URL)
	return ts
}

// changeDumpPackage is a Change Dump package: f.txt created on 2024-01-05
// (its length from its member) and d.txt deleted then.
func changeDumpPackage(t *testing.T, base string) []byte {
	t.Helper()
	man := fmt.Sprintf(`<urlset %s><rs:md capability="changedump-manifest" from="2024-01-04T00:00:00Z" until="2024-01-06T00:00:00Z"/>
<url><loc>%s/f.txt</loc><lastmod>2024-01-05T00:00:00Z</lastmod><rs:md change="created" datetime="2024-01-05T00:00:00Z" path="/r/f.txt"/></url>
<url><loc>%s/d.txt</loc><rs:md change="deleted" datetime="2024-01-05T00:00:00Z"/></url></urlset>`, nsXML, base, base)
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, m := range []struct{ name, body string }{{"manifest.xml", man}, {"r/f.txt", "seven!!"}} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write([]byte(m.body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func truthOf(t *testing.T, url string) *catalog.Catalog {
	t.Helper()
	s, err := discover(t, url)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cat, err := Truth(ctx, s)
	require.NoError(t, err)
	return cat
}

func TestTruthAppliesChangesAfterTheListsAsTheFollowerDates(t *testing.T) {
	ts := startTruthSource(t)
	cat := truthOf(t, ts.base+"/caps.xml")
	u := func(p string) string { return ts.base + p }

	got := map[string]string{}
	for _, uri := range cat.URIs() {
		r := resourceAt(cat, uri)
		got[strings.TrimPrefix(uri, ts.base)] = fmt.Sprintf("%d %s", r.Length, r.Lastmod.UTC().Format(time.RFC3339))
	}
	assert.Equal(t, map[string]string{
		"/a.txt": "5 2024-01-04T00:00:00Z", // the last of two updates; no length published: learned by HEAD
		"/b.txt": "1 2023-06-01T00:00:00Z", // its update is dated before the lists' time
		"/e.txt": "5 2024-01-04T00:00:00Z", // undated: after the entry before it
		"/f.txt": "7 2024-01-05T00:00:00Z", // from the Change Dump, its length the member's
		"/g.txt": "3 2023-12-15T00:00:00Z", // undated, before the lists' time, and not in them: the follower's doubt, applied
	}, got, "c.txt deleted; d.txt created at the lists' very time, then deleted by the Change Dump; the ftp entry left out")

	a := resourceAt(cat, u("/a.txt"))
	assert.Equal(t, []resourcesync.Hash{{Alg: "md5", Value: "5d41402abc4b2a76b9719d911017c592"}}, a.Hashes)
	id, ok := cat.ByURI(u("/f.txt"))
	require.True(t, ok)
	assert.Equal(t, "f.txt", cat.Path(id), "paths come from the catalog's mapping")
}

func TestTruthWithoutChangeDocuments(t *testing.T) {
	ts := startTruthSource(t)
	ts.docs["/caps.xml"] = `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>%[1]s/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`
	cat := truthOf(t, ts.base+"/caps.xml")
	assert.Equal(t, 3, cat.Len())
}

func TestTruthFailsOnAnUnreadableChangeList(t *testing.T) {
	ts := startTruthSource(t)
	delete(ts.docs, "/cl2.xml")
	s, err := discover(t, ts.base+"/caps.xml")
	require.NoError(t, err)
	_, err = Truth(context.Background(), s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cl2.xml")
}

func TestCompare(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	md5 := func(v string) []resourcesync.Hash { return []resourcesync.Hash{{Alg: "md5", Value: v}} }
	build := func(rs ...*catalog.Resource) *catalog.Catalog {
		c := catalog.New(catalog.Options{Origin: "http://x"})
		for _, r := range rs {
			require.NoError(t, c.Add(r))
		}
		require.NoError(t, c.Seal())
		return c
	}
	have := build(
		&catalog.Resource{URI: "http://x/same", Length: 1, Lastmod: t0},
		&catalog.Resource{URI: "http://x/newer", Length: 1, Lastmod: t0},
		&catalog.Resource{URI: "http://x/longer", Length: 1, Lastmod: t0},
		&catalog.Resource{URI: "http://x/samehash", Length: 1, Lastmod: t0, Hashes: md5("aa")},
		&catalog.Resource{URI: "http://x/otherhash", Length: 1, Lastmod: t0, Hashes: md5("aa")},
		&catalog.Resource{URI: "http://x/unknownlength", Length: 1, Lastmod: t0},
		&catalog.Resource{URI: "http://x/gone", Length: 1, Lastmod: t0},
		&catalog.Resource{URI: "http://x/gone2", Length: 1, Lastmod: t0},
		&catalog.Resource{URI: "http://x/nolastmod", Length: 1},
		&catalog.Resource{URI: "http://x/nolastmodlonger", Length: 1},
		&catalog.Resource{URI: "http://x/lastmodgone", Length: 1, Lastmod: t0},
	)
	want := build(
		&catalog.Resource{URI: "http://x/same", Length: 1, Lastmod: t0.In(time.FixedZone("x", 3600))},
		&catalog.Resource{URI: "http://x/newer", Length: 1, Lastmod: t0.Add(time.Second)},
		&catalog.Resource{URI: "http://x/longer", Length: 2, Lastmod: t0},
		&catalog.Resource{URI: "http://x/samehash", Length: 1, Lastmod: t0.Add(time.Hour), Hashes: md5("aa")}, // a hash both publish decides
		&catalog.Resource{URI: "http://x/otherhash", Length: 1, Lastmod: t0, Hashes: md5("bb")},
		&catalog.Resource{URI: "http://x/unknownlength", Length: resourcesync.NoLength, Lastmod: t0},
		&catalog.Resource{URI: "http://x/new", Length: 1, Lastmod: t0},
		&catalog.Resource{URI: "http://x/nolastmod", Length: 1},       // nothing tells them apart: no drift
		&catalog.Resource{URI: "http://x/nolastmodlonger", Length: 2}, // the lengths do
		&catalog.Resource{URI: "http://x/lastmodgone", Length: 1},     // one lastmod only: another version
	)
	d := Compare(have, want)
	assert.Equal(t, Drift{
		Created: []string{"http://x/new"},
		Updated: []string{"http://x/lastmodgone", "http://x/longer", "http://x/newer", "http://x/nolastmodlonger", "http://x/otherhash"},
		Deleted: []string{"http://x/gone", "http://x/gone2"},
	}, d)
	assert.Equal(t, 8, d.Len())
	assert.Equal(t, "1 created, 2 deleted, 5 updated (examples: http://x/new, http://x/gone, http://x/gone2)", d.String())
	assert.Equal(t, "no drift", Compare(want, want).String())
	assert.Zero(t, Compare(want, want).Len())
}

// A Resource Dump whose package, or whose document, cannot be read leaves
// the resources only it holds unknown: Truth fails rather than report them
// deleted, so drift repair and rsfs audit never remove them for it.
func TestTruthFailsOnAnUnreadableResourceDump(t *testing.T) {
	for name, docs := range map[string]map[string]string{
		"package": {"/rd.xml": `<urlset ` + nsXML + `><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>
<url><loc>%[1]s/dump/rd.zip</loc><rs:md type="application/zip"/></url></urlset>`},
		"document": {},
	} {
		t.Run(name, func(t *testing.T) {
			ts := startTruthSource(t)
			ts.docs["/caps.xml"] = `<urlset ` + nsXML + `><rs:md capability="capabilitylist"/>
<url><loc>%[1]s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%[1]s/rd.xml</loc><rs:md capability="resourcedump"/></url></urlset>`
			maps.Copy(ts.docs, docs)
			s, err := discover(t, ts.base+"/caps.xml")
			require.NoError(t, err)
			_, err = Truth(context.Background(), s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "could not be read, so the resources only they hold are not known")
		})
	}
}
