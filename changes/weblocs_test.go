package changes

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/tests/logbuf"
)

// Loading leaves them out too: source.TestNonWebLocsAreLeftOutWithOneWarningPerDocument.
func TestFollowedNonWebLocsAreLeftOut(t *testing.T) {
	var base string
	var changes string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/caps.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="capabilitylist"/>
<url><loc>%s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%s/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`, nsXML, base, base)
		case "/rl.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/a.txt</loc><rs:md length="1"/></url>
<url><loc>file:///etc/passwd</loc><rs:md length="1"/></url>
<url><loc>javascript:alert(1)</loc><rs:md length="1"/></url>
<url><loc>gopher://127.0.0.1:70/x</loc><rs:md length="1"/></url></urlset>`, nsXML, base)
		case "/cl.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>%s</urlset>`, nsXML, changes)
		default:
			w.Write([]byte("x"))
		}
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	var logs logbuf.Buffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := discoverSource(ctx, base+"/caps.xml", opts)
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: s.Origin})
	_, err = s.Load(ctx, cat, nil)
	require.NoError(t, err)
	require.Equal(t, []string{base + "/a.txt"}, cat.URIs(), "only the http resource is in the tree")

	f := New(s, cat, FollowOptions{}, nil)
	mu.Lock()
	changes = fmt.Sprintf(`<url><loc>file:///etc/shadow</loc><rs:md change="created" datetime="2024-01-02T00:00:00Z" length="1"/></url>
<url><loc>%s/b.txt</loc><rs:md change="created" datetime="2024-01-02T00:00:00Z" length="1"/></url>`, base)
	mu.Unlock()
	pollOnce(t, f)
	assert.Equal(t, []string{base + "/a.txt", base + "/b.txt"}, cat.URIs(), "a followed change to a file: URI is left out")
	assert.Contains(t, logs.String(), "document="+base+"/cl.xml entries=1 example=file:///etc/shadow")
}
