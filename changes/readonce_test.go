package changes

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/source"
)

// readOnceSource serves a Source with a Resource List, a Resource Dump, a
// Change Dump Index naming a Change Dump of two packages, and a Change
// Dump named directly; it counts every request by method, path and range.
type readOnceSource struct {
	mu   sync.Mutex
	base string
	docs map[string]string
	zips map[string][]byte
	hits map[string]int
}

func (s *readOnceSource) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.Path
	if rg := r.Header.Get("Range"); rg != "" {
		key += " " + rg
	}
	s.mu.Lock()
	s.hits[key]++
	body, isDoc := s.docs[r.URL.Path]
	zb, isZip := s.zips[r.URL.Path]
	s.mu.Unlock()
	switch {
	case isZip:
		w.Header().Set("ETag", `"z`+r.URL.Path+`"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(zb))
	case isDoc:
		w.Header().Set("Content-Type", "application/xml")
		w.Write([]byte(strings.ReplaceAll(body, "BASE", s.base)))
	default:
		http.NotFound(w, r)
	}
}

func (s *readOnceSource) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hits
	s.hits = map[string]int{}
	return h
}

func startReadOnceSource(t *testing.T) *readOnceSource {
	t.Helper()
	s := &readOnceSource{hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.base = srv.URL
	s.docs = map[string]string{
		"/caps.xml": `<urlset ` + ns + `><rs:md capability="capabilitylist"/>
<url><loc>BASE/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>BASE/rd.xml</loc><rs:md capability="resourcedump"/></url>
<url><loc>BASE/cdi.xml</loc><rs:md capability="changedump"/></url>
<url><loc>BASE/cd2.xml</loc><rs:md capability="changedump"/></url></urlset>`,
		"/rl.xml": rlAt,
		"/rd.xml": `<urlset ` + ns + `><rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>
<url><loc>BASE/rd.zip</loc><rs:md type="application/zip"/></url></urlset>`,
		"/cdi.xml": `<sitemapindex ` + ns + `><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>BASE/cd.xml</loc><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`,
		"/cd.xml": `<urlset ` + ns + `><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>
<url><loc>BASE/p1.zip</loc><rs:md type="application/zip" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></url>
<url><loc>BASE/p2.zip</loc><rs:md type="application/zip" from="2024-01-02T00:00:00Z" until="2024-01-03T00:00:00Z"/></url></urlset>`,
		"/cd2.xml": `<urlset ` + ns + `><rs:md capability="changedump" from="2024-01-03T00:00:00Z"/>
<url><loc>BASE/p3.zip</loc><rs:md type="application/zip" from="2024-01-03T00:00:00Z" until="2024-01-04T00:00:00Z"/></url></urlset>`,
	}
	manifest := func(c, md, body string) string {
		return strings.ReplaceAll(`<urlset `+ns+`><rs:md capability="`+c+`" `+md+`/>`+body+`</urlset>`, "BASE", s.base)
	}
	span := func(from, until string) string {
		return `from="2024-01-0` + from + `T00:00:00Z" until="2024-01-0` + until + `T00:00:00Z"`
	}
	s.zips = map[string][]byte{
		"/rd.zip": zipPackage(t, manifest("resourcedump-manifest", `at="2024-01-01T00:00:00Z"`,
			`<url><loc>BASE/a.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md length="1" path="/res/a.txt"/></url>`),
			map[string]string{"res/a.txt": "a"}),
		"/p1.zip": zipPackage(t, manifest("changedump-manifest", span("1", "2"),
			`<url><loc>BASE/n.txt</loc><lastmod>2024-01-01T13:00:00Z</lastmod><rs:md change="created" datetime="2024-01-01T13:00:00Z" path="/res/n.txt"/></url>`),
			map[string]string{"res/n.txt": "nnnn"}),
		"/p2.zip": zipPackage(t, manifest("changedump-manifest", span("2", "3"),
			`<url><loc>BASE/b.txt</loc><lastmod>2024-01-02T13:00:00Z</lastmod><rs:md change="updated" datetime="2024-01-02T13:00:00Z" length="2" path="/res/b.txt"/></url>`),
			map[string]string{"res/b.txt": "bb"}),
		"/p3.zip": zipPackage(t, manifest("changedump-manifest", span("3", "4"),
			`<url><loc>BASE/c.txt</loc><rs:md change="deleted" datetime="2024-01-03T13:00:00Z"/></url>`),
			map[string]string{}),
	}
	return s
}

// repeated returns the requests made more than once, as "request ×n".
func repeated(hits map[string]int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(hits)) {
		if hits[k] > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", k, hits[k]))
		}
	}
	return out
}

// perDocument sums the requests by path, for the log.
func perDocument(hits map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range hits {
		f := strings.Fields(k)
		out[f[1]] += n
	}
	return out
}

// A fresh load, Truth and inspect each read every document once: a
// Change Dump (named directly, and by a Change Dump Index), its
// packages' manifests, a Resource Dump and its package. Each use starts
// from a Source of its own, as a mount, audit and inspect do, and its
// requests are counted whole: nothing a load reads is subtracted.
func TestEveryDocumentIsReadOncePerUse(t *testing.T) {
	s := startReadOnceSource(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// discovered is the Source as a use starts from it: discovery's own
	// requests are not the use's, and are dropped from the counts.
	discovered := func() *source.Source {
		t.Helper()
		src, err := discoverSource(ctx, s.base+"/caps.xml", testOptions())
		require.NoError(t, err)
		_ = s.take()
		return src
	}
	uses := map[string]func(){
		"load": func() {
			src := discovered()
			cat := catalog.New(catalog.Options{Origin: src.Origin})
			_, err := src.Load(ctx, cat, nil)
			require.NoError(t, err)
			_, ok := cat.ByURI(s.base + "/n.txt")
			assert.True(t, ok, "the Change Dump's resource is loaded")
		},
		"truth": func() {
			src := discovered()
			truth, err := Truth(ctx, src)
			require.NoError(t, err)
			assert.Equal(t, int64(2), resourceAt(truth, s.base+"/b.txt").Length, "p2's update applied")
			_, gone := truth.ByURI(s.base + "/c.txt")
			assert.False(t, gone, "p3's deletion applied")
		},
		"inspect": func() {
			src := discovered()
			rep, err := Inspect(ctx, src)
			require.NoError(t, err)
			require.Len(t, rep.Sets, 1)
			assert.Len(t, rep.Sets[0].Packages, 4, "every package reported")
		},
	}
	for _, name := range []string{"load", "truth", "inspect"} {
		uses[name]()
		hits := s.take()
		t.Logf("%s: requests per document %v", name, perDocument(hits))
		assert.Empty(t, repeated(hits), "%s: requests made more than once", name)
		for _, d := range []string{"/rd.xml", "/cdi.xml", "/cd.xml", "/cd2.xml"} {
			assert.Equal(t, 1, hits["GET "+d], "%s: GETs of %s", name, d)
		}
		for _, z := range []string{"/rd.zip", "/p1.zip", "/p2.zip", "/p3.zip"} {
			assert.Equal(t, 1, hits["HEAD "+z], "%s: HEADs of %s", name, z)
		}
	}

	// A fresh mount: the load, then the catch-up poll, which reads the
	// Change Dumps again (it polls them: a whole GET, whose validators the
	// next poll asks with) but walks their packages from what the load
	// read: no package request twice.
	src := discovered()
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	_, err := src.Load(ctx, cat, nil)
	require.NoError(t, err)
	f := New(src, cat, FollowOptions{}, nil)
	require.NoError(t, f.Poll(ctx))
	src.ForgetLoad() // as mountsrc's CatchUp does
	hits := s.take()
	t.Logf("mount (load and catch-up poll): requests per document %v", perDocument(hits))
	var twice []string
	for _, r := range repeated(hits) {
		if !strings.Contains(r, ".xml") {
			twice = append(twice, r)
		}
	}
	assert.Empty(t, twice, "a fresh mount asks for each package's HEAD and ranges once")
	assert.Equal(t, int64(2), resourceAt(cat, s.base+"/b.txt").Length, "the catch-up applied p2's update")
}
