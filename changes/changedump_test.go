package changes

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/copies"
	"rsfs/resourcesync"
)

// changeDumpSource publishes one Resource List (one file) and a Change Dump
// of one package that creates /new.txt and updates /old.txt; it serves the
// package by Range and every resource's URI, counting requests per path.
type changeDumpSource struct {
	mu   sync.Mutex
	base string
	pkg  []byte
	hits map[string]int
}

func (s *changeDumpSource) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	var body string
	switch r.URL.Path {
	case "/.well-known/resourcesync":
		body = fmt.Sprintf(`<urlset %s><rs:md capability="description"/>
<url><loc>%s/caps.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`, nsXML, s.base)
	case "/caps.xml":
		body = fmt.Sprintf(`<urlset %s><rs:ln rel="up" href="%s/.well-known/resourcesync"/><rs:md capability="capabilitylist"/>
<url><loc>%s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%s/cd.xml</loc><rs:md capability="changedump"/></url></urlset>`, nsXML, s.base, s.base, s.base)
	case "/rl.xml":
		body = fmt.Sprintf(`<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/old.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="3"/></url></urlset>`, nsXML, s.base)
	case "/cd.xml":
		body = fmt.Sprintf(`<urlset %s><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>
<url><loc>%s/p1.zip</loc><rs:md type="application/zip" length="%d" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></url></urlset>`,
			nsXML, s.base, len(s.pkg))
	case "/p1.zip":
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.pkg))
		return
	default: // the URIs: a later version than the dump's
		body = "from the URI " + r.URL.Path
	}
	w.Write([]byte(body))
}

func (s *changeDumpSource) requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hits
	s.hits = map[string]int{}
	return h
}

func buildChangeDumpPackage(t *testing.T, base string, members map[string]string) []byte {
	var man bytes.Buffer
	fmt.Fprintf(&man, `<urlset %s><rs:md capability="changedump-manifest" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>`, nsXML)
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	names := []string{"new.txt", "old.txt"}
	change := map[string]string{"new.txt": "created", "old.txt": "updated"}
	for i, name := range names {
		fmt.Fprintf(&man, `<url><loc>%s/%s</loc><lastmod>2024-01-01T12:00:00Z</lastmod><rs:md change="%s" datetime="2024-01-01T12:0%d:00Z" length="%d" path="/res/%s"/></url>`,
			base, name, change[name], i, len(members[name]), name)
	}
	man.WriteString("</urlset>")
	write := func(name string, body []byte) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write(body)
		require.NoError(t, err)
	}
	write("manifest.xml", man.Bytes())
	for _, name := range names {
		write("res/"+name, []byte(members[name]))
	}
	require.NoError(t, zw.Close())
	return zb.Bytes()
}

// A file a Change Dump creates (or updates) reads from the dump package
// first: the package is asked, the URI is not; the URI stays a fallback.
func TestChangeDumpFilesReadFromTheDumpFirst(t *testing.T) {
	src := &changeDumpSource{hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(src.serve))
	t.Cleanup(srv.Close)
	src.base = srv.URL
	members := map[string]string{"new.txt": "new, from the dump", "old.txt": "old, updated in the dump"}
	src.pkg = buildChangeDumpPackage(t, srv.URL, members)
	s, cat, _, err := load(t, srv.URL+"/")
	require.NoError(t, err)
	f := New(s, cat, FollowOptions{}, nil)
	pollOnce(t, f)
	src.requests()

	rd := copies.NewReader(s.Client(), copies.ReaderOptions{Members: s})
	for _, name := range []string{"new.txt", "old.txt"} {
		id, ok := cat.ByURI(srv.URL + "/" + name)
		require.True(t, ok, name)
		r, ok := cat.Resource(id)
		require.True(t, ok, name)
		require.Equal(t, int64(len(members[name])), r.Length)
		var dump *resourcesync.Link
		for i := range r.Links {
			if r.Links[i].Rel == copies.DumpRel {
				dump = &r.Links[i]
			}
		}
		require.NotNil(t, dump, "%s has its member as a copy", name)
		assert.Equal(t, 1, dump.Pri, "%s: the member is read before the URI", name)

		rc, _, err := rd.Open(r).OpenRange(t.Context(), 0, r.Length)
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		assert.Equal(t, members[name], string(got))
	}
	hits := src.requests()
	assert.Positive(t, hits["/p1.zip"], "the package is asked")
	assert.Zero(t, hits["/new.txt"], "the URI of the created file is not")
	assert.Zero(t, hits["/old.txt"], "the URI of the updated file is not")
	t.Logf("requests for the two reads: %v", hits)
}
