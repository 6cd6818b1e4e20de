package changes

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"rsfs/catalog"
)

// sameInstantSource serves a Change List of n changes that all share one
// datetime, beside a Resource List older than them.
func sameInstantSource(b *testing.B, n int) string {
	var cl bytes.Buffer
	ns := `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := srv.URL
		switch r.URL.Path {
		case "/caps.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="capabilitylist"/>
<url><loc>%s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%s/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`, ns, base, base)
		case "/rl.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`, ns, base)
		case "/cl.xml":
			if cl.Len() == 0 {
				fmt.Fprintf(&cl, `<urlset %s><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>`, ns)
				for i := 0; i < n; i++ {
					fmt.Fprintf(&cl, `<url><loc>%s/d/%d.txt</loc><rs:md change="created" datetime="2024-01-02T00:00:00Z" length="3"/></url>`, base, i)
				}
				cl.WriteString(`</urlset>`)
			}
			w.Write(cl.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkPollSameInstant measures a poll that finds nothing new in a
// Change List of 100,000 changes sharing one datetime, all applied already.
func BenchmarkPollSameInstant(b *testing.B) {
	url := sameInstantSource(b, 100_000)
	s, err := discoverSource(context.Background(), url+"/caps.xml", testOptions())
	if err != nil {
		b.Fatal(err)
	}
	cat := catalog.New(catalog.Options{Origin: s.Origin})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := s.Load(ctx, cat, nil); err != nil {
		b.Fatal(err)
	}
	f := New(s, cat, FollowOptions{}, nil)
	if err := f.Poll(ctx); err != nil {
		b.Fatal(err)
	}
	if cat.Len() != 100_001 {
		b.Fatalf("%d resources after the first poll, want 100001", cat.Len())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.Poll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got := f.Stats().Applied; got != 100_000 {
		b.Fatalf("%d changes applied, want 100000", got)
	}
}
